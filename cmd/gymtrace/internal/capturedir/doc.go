// Package capturedir lists the rollouts of a capture directory (SPEC.md §2.1) for `gymtrace report`
// and `gymtrace rederive`: the ids with a capture file or an incomplete marker; and it names the
// files such a directory holds ([IsManaged]), which no CLI output may replace. It only reads
// directory entries; reading the files is package capture's business. Functions are safe for
// concurrent use.
package capturedir
