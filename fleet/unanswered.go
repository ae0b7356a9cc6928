package fleet

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Unanswered reports whether an export error means the gateway did not answer, so that the span
// may go to the next gateway: the connection was refused, reset or could not be made (host or
// network unreachable, a name that does not resolve), it closed before a response (io.EOF,
// io.ErrUnexpectedEOF: a gateway killed mid-request), the attempt timed out, or gRPC's
// Unavailable / DeadlineExceeded. Anything else is an answer — an error the gateway itself
// returned — and is not retried elsewhere.
func Unanswered(err error) bool {
	if err == nil {
		return false
	}
	for _, target := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ETIMEDOUT, syscall.EPIPE,
		io.EOF, io.ErrUnexpectedEOF, context.DeadlineExceeded} {
		if errors.Is(err, target) {
			return true
		}
	}
	var dnsErr *net.DNSError
	var netErr net.Error
	if errors.As(err, &dnsErr) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return true
	}
	if s, ok := status.FromError(err); ok {
		return s.Code() == codes.Unavailable || s.Code() == codes.DeadlineExceeded
	}
	return false
}
