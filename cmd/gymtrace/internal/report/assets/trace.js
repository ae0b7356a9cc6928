// Draws each rollout's trace view (a waterfall of its agent invocations, tool calls, compactions,
// sandbox runs and model calls on one time axis) from the JSON the report embeds, when the
// rollout's section first opens: bars on the axis, rows indented by nesting, an arrow from each
// model call to the tool calls it asked for, and a details panel for the clicked row. Every value
// is set as text, never as markup. No network, no library.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var arrows = 0;

  var fmtMS = function (ms) {
    if (ms === null || ms === undefined) { return "-"; }
    if (ms === 0) { return "0"; }
    if (ms < 1) { return ms.toFixed(2) + "ms"; }
    if (ms < 10) { return ms.toFixed(1) + "ms"; }
    if (ms < 1000) { return Math.round(ms) + "ms"; }
    if (ms < 60000) { return (ms / 1000).toFixed(1) + "s"; }
    var s = Math.round(ms / 1000);
    return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  };

  var el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  };

  var pct = function (v, total) { return total > 0 ? (v / total) * 100 : 0; };

  // render draws the trace view of one .trace-view element once.
  var render = function (box) {
    if (box.getAttribute("data-drawn")) { return; }
    box.setAttribute("data-drawn", "1");
    var data = JSON.parse(box.querySelector("script.trace-data").textContent);
    var total = data.duration_ms;
    var tv = el("div", "tv");
    var main = el("div", "tv-main");
    var axis = el("div", "tv-row tv-axis");
    axis.appendChild(el("div", "tv-label", "span"));
    var ticks = el("div", "tv-track");
    for (var i = 0; i <= 4; i++) {
      var t = el("span", "tv-tick", fmtMS(total * i / 4));
      t.style.left = (i * 25) + "%";
      ticks.appendChild(t);
    }
    axis.appendChild(ticks);
    axis.appendChild(el("div", "tv-meta", "duration"));
    main.appendChild(axis);
    var rows = el("div", "tv-rows");
    var byID = {};
    data.spans.forEach(function (s) {
      var row = el("div", "tv-row tv-span kind-" + s.kind + (s.error ? " error" : ""));
      row.setAttribute("data-span-id", s.id);
      row.setAttribute("data-kind", s.kind);
      row.setAttribute("data-depth", String(s.depth));
      if (s.parent) { row.setAttribute("data-parent", s.parent); }
      row.tabIndex = 0;
      var label = el("div", "tv-label", s.label);
      label.style.paddingLeft = (4 + 14 * s.depth) + "px";
      label.title = s.label;
      row.appendChild(label);
      var track = el("div", "tv-track");
      if (s.start_ms !== null) {
        var bar = el("div", "tv-bar");
        bar.style.left = pct(s.start_ms, total) + "%";
        bar.style.width = "max(2px, " + pct(s.duration_ms || 0, total) + "%)";
        bar.title = s.label + " · " + fmtMS(s.duration_ms) + " · " + s.status;
        track.appendChild(bar);
      }
      row.appendChild(track);
      var meta = fmtMS(s.duration_ms);
      if (s.kind === "model_call" && (s.tokens_in !== undefined || s.tokens_out !== undefined)) {
        meta += " · " + (s.tokens_in === undefined ? "-" : s.tokens_in) + "/" + (s.tokens_out === undefined ? "-" : s.tokens_out) + " tok";
      }
      if (s.error) { meta += " · " + s.status; }
      row.appendChild(el("div", "tv-meta", meta));
      row.addEventListener("click", function () { select(s.id); });
      row.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(s.id); }
      });
      byID[s.id] = { span: s, row: row };
      rows.appendChild(row);
    });
    var links = document.createElementNS(SVG, "svg");
    links.setAttribute("class", "tv-links");
    links.setAttribute("aria-hidden", "true");
    rows.appendChild(links);
    main.appendChild(rows);
    tv.appendChild(main);
    var panel = el("aside", "tv-details");
    panel.appendChild(el("p", "muted", "Click a span to see its details."));
    tv.appendChild(panel);
    box.appendChild(tv);

    var goto = function (id) {
      var b = el("button", "tv-goto", byID[id].span.label);
      b.type = "button";
      b.setAttribute("data-target", id);
      b.addEventListener("click", function () { select(id); byID[id].row.scrollIntoView({ block: "nearest" }); byID[id].row.focus(); });
      return b;
    };
    var select = function (id) {
      var cur = byID[id];
      if (!cur) { return; }
      Array.prototype.forEach.call(rows.querySelectorAll(".tv-row.selected"), function (r) { r.classList.remove("selected"); });
      cur.row.classList.add("selected");
      Array.prototype.forEach.call(links.querySelectorAll(".tv-link"), function (p) {
        p.classList.toggle("hl", p.getAttribute("data-from") === id || p.getAttribute("data-to") === id);
      });
      var s = cur.span;
      panel.textContent = "";
      panel.setAttribute("data-span-id", id);
      panel.appendChild(el("h4", "", s.label));
      var tbl = el("table", "tv-dl");
      var add = function (k, v) {
        var tr = el("tr");
        tr.appendChild(el("th", "", k));
        var td = el("td");
        if (typeof v === "string") { td.textContent = v; } else { td.appendChild(v); }
        tr.appendChild(td);
        tbl.appendChild(tr);
      };
      add("kind", s.kind);
      add("status", s.status);
      add("start", s.start_ms === null ? "-" : "+" + fmtMS(s.start_ms));
      add("duration", fmtMS(s.duration_ms));
      // The links first (the drawn rows they lead to); the details' own "asked for by" text stays
      // for a call that is not drawn.
      var linked = s.asked_by && byID[s.asked_by];
      if (linked) { add("asked for by", goto(s.asked_by)); }
      (s.asks || []).forEach(function (t) { if (byID[t]) { add("asked for tool call", goto(t)); } });
      s.details.forEach(function (d) { if (!(linked && d[0] === "asked for by")) { add(d[0], d[1]); } });
      panel.appendChild(tbl);
    };

    // drawLinks draws an arrow from each model call's bar to the bars of the tool calls it asked for.
    var drawLinks = function () {
      links.textContent = "";
      var box = rows.getBoundingClientRect();
      links.setAttribute("width", String(box.width));
      links.setAttribute("height", String(box.height));
      var defs = document.createElementNS(SVG, "defs");
      var marker = document.createElementNS(SVG, "marker");
      marker.setAttribute("id", "tv-arrow-" + (++arrows));
      marker.setAttribute("viewBox", "0 0 8 8");
      marker.setAttribute("refX", "7");
      marker.setAttribute("refY", "4");
      marker.setAttribute("markerWidth", "6");
      marker.setAttribute("markerHeight", "6");
      marker.setAttribute("orient", "auto");
      var tip = document.createElementNS(SVG, "path");
      tip.setAttribute("d", "M0,0 L8,4 L0,8 z");
      marker.appendChild(tip);
      defs.appendChild(marker);
      links.appendChild(defs);
      data.spans.forEach(function (s) {
        var from = s.asked_by && byID[s.asked_by];
        if (!from) { return; }
        var a = from.row.querySelector(".tv-bar"), b = byID[s.id].row.querySelector(".tv-bar");
        if (!a || !b) { return; }
        var ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
        var x1 = ra.right - box.left, y1 = ra.top + ra.height / 2 - box.top;
        var x2 = rb.left - box.left, y2 = rb.top + rb.height / 2 - box.top;
        var p = document.createElementNS(SVG, "path");
        var bend = Math.max(12, Math.abs(x2 - x1) / 3);
        p.setAttribute("d", "M" + x1 + "," + y1 + " C" + (x1 + bend) + "," + y1 + " " + (x2 - bend) + "," + y2 + " " + x2 + "," + y2);
        p.setAttribute("class", "tv-link");
        p.setAttribute("data-from", s.asked_by);
        p.setAttribute("data-to", s.id);
        p.setAttribute("marker-end", "url(#" + marker.getAttribute("id") + ")");
        links.appendChild(p);
      });
    };
    drawLinks();
    window.addEventListener("resize", drawLinks);
  };

  var renderIn = function (details) {
    Array.prototype.forEach.call(details.querySelectorAll(".trace-view"), render);
  };
  Array.prototype.forEach.call(document.querySelectorAll("details.rollout-calls"), function (d) {
    d.addEventListener("toggle", function () { if (d.open) { renderIn(d); } });
    if (d.open) { renderIn(d); }
  });
})();
