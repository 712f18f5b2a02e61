package confiner

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// routeEgress runs on the command's thread, in the run's new network
// namespace, before Landlock and seccomp: it brings loopback up and
// listens on 127.0.0.1:r.Port there. The helper's other threads, which
// stayed in the plugin's namespace (the Go runtime starts new threads from
// a clean template thread, never from a locked one), accept those
// connections and relay each to the run's proxy at r.Target: the one way
// out of the namespace.
func routeEgress(r *Route) error {
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)))
	if err != nil {
		return err
	}
	go relay(ln, r.Target)
	return nil
}

// loopbackUp sets the namespace's lo interface up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// relayed bounds the connections relayed at once: each holds two of the
// run's descriptors (the helper shares its open-files limit).
const relayed = 128

// relay hands every connection on ln to the proxy at target, until the
// helper exits with the run. A failed accept (out of descriptors, say) is
// waited out, never the end of the run's network.
func relay(ln net.Listener, target string) {
	slots := make(chan struct{}, relayed)
	for {
		slots <- struct{}{}
		c, err := ln.Accept()
		if err != nil {
			<-slots
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		go func() {
			defer func() { <-slots }()
			up, err := net.DialTimeout("tcp", target, 30*time.Second)
			if err != nil {
				_ = c.Close()
				return
			}
			pipe(c, up)
		}()
	}
}

// pipe copies both ways, passing on each side's end of input, and closes
// both when both directions are done.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	go copyHalf(a, b)
	go copyHalf(b, a)
	wg.Wait()
	_ = a.Close()
	_ = b.Close()
}
