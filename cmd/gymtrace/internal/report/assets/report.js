// Sorts the rollout table by the clicked column (numbers first descending, text ascending; unknown
// values always last; ties keep the original order) and opens a rollout's calls when its link is
// followed. No network, no library.
(function () {
  "use strict";
  var table = document.getElementById("rollouts");
  if (table && table.tHead && table.tBodies.length) {
    var heads = table.tHead.rows[0].cells;
    var body = table.tBodies[0];
    var keyOf = function (row, i, num) {
      var v = row.cells[i].getAttribute("data-v");
      if (v === null || v === "") { return null; }
      return num ? parseFloat(v) : v;
    };
    var sortBy = function (i) {
      var th = heads[i];
      var num = th.getAttribute("data-type") === "num";
      var cur = th.getAttribute("aria-sort");
      var dir = cur === "descending" ? "ascending" : cur === "ascending" ? "descending" : (th.getAttribute("data-first") || (num ? "descending" : "ascending"));
      for (var j = 0; j < heads.length; j++) { heads[j].removeAttribute("aria-sort"); }
      th.setAttribute("aria-sort", dir);
      var sign = dir === "ascending" ? 1 : -1;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = keyOf(a, i, num), y = keyOf(b, i, num);
        if (x === null || y === null) {
          if (x === y) { return a.getAttribute("data-order") - b.getAttribute("data-order"); }
          return x === null ? 1 : -1;
        }
        if (x < y) { return -sign; }
        if (x > y) { return sign; }
        return a.getAttribute("data-order") - b.getAttribute("data-order");
      });
      rows.forEach(function (r) { body.appendChild(r); });
    };
    Array.prototype.forEach.call(heads, function (th, i) {
      if (!th.hasAttribute("data-type")) { return; }
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(i); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(i); }
      });
    });
  }
  var openTarget = function () {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; }
  };
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
