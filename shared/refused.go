package shared

import "errors"

// Reasons a backend gives for refusing a request, which the host maps to
// exit statuses and hints without reading the message.
const (
	// ReasonInterpreter: the command's interpreter (or its libraries) lies
	// outside what the sandbox lets scripts read and execute; the host's
	// configuration (sandbox.interpreters) fixes it.
	ReasonInterpreter = "interpreter"
	// ReasonUnsupported: this machine cannot confine as the backend must
	// (a missing kernel feature, refused namespaces); the backend's
	// settings or another strategy fix it.
	ReasonUnsupported = "unsupported"
	// ReasonEgress: the grant's network by name (Grant.Egress) is not
	// usable: a bad pattern, address range or credential, or a backend
	// that cannot enforce it.
	ReasonEgress = "egress"
)

// RefusedError is a backend's refusal of a request with a reason code
// (Reason* constants; a backend may use others). It crosses the process
// boundary as the gRPC status's ErrorInfo detail, so the host reads the
// reason with errors.As, never from the message.
type RefusedError struct {
	Reason string
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refused wraps err as a refusal for reason.
func Refused(reason string, err error) error { return &RefusedError{Reason: reason, Err: err} }

// RefusedFor reports the reason err is a refusal for, or "".
func RefusedFor(err error) string {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}
