// Package capturegen makes real capture files for tests: it runs the capture middleware
// (proxy.CaptureHandler) in front of the fake model server (package fakemodel) on 127.0.0.1 and sends
// the model calls it is given through it, so the records on disk are exactly what the current code
// writes — streamed and not, in every dialect, with the failures fakemodel can inject.
//
// It is for tests only. [Generate] stops every server it starts before it returns.
package capturegen
