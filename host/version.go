package host

// Version is skillhost's version.
const Version = "0.1.0"
