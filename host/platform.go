package host

import "runtime"

// Platform lists the confinement features of this machine, for doctor.
type Platform struct {
	OS       string            `json:"os"`
	Kernel   string            `json:"kernel,omitempty"`
	Features map[string]string `json:"features"`
}

// DetectPlatform inspects the running system.
func DetectPlatform() Platform {
	p := Platform{OS: runtime.GOOS + "/" + runtime.GOARCH, Features: map[string]string{}}
	detectPlatform(&p)
	return p
}
