package temporal

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// WorkerMain is `skillhost-sandbox-temporal worker`: it serves the fleet's
// task queue until SIGINT or SIGTERM, then finishes the runs it holds.
func WorkerMain(args []string, stderr io.Writer) int {
	fl := flag.NewFlagSet("skillhost-sandbox-temporal worker", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var o WorkerOptions
	fl.StringVar(&o.Address, "address", "", "the cluster's frontend, host:port (required)")
	fl.StringVar(&o.Namespace, "namespace", "default", "the cluster's namespace")
	fl.StringVar(&o.TaskQueue, "task-queue", DefaultTaskQueue, "the fleet's task queue")
	fl.StringVar(&o.Strategy, "strategy", "landlock", "the local sandbox plugin that confines each run")
	fl.StringVar(&o.PluginsDir, "plugins-dir", "", "where skillhost-sandbox-<strategy> is (default: beside this binary)")
	fl.IntVar(&o.Concurrency, "concurrency", 4, "runs at once")
	fl.StringVar(&o.CacheDir, "cache-dir", "", "skills by digest and each run's scratch space (default: the user's cache directory)")
	cacheMiB := fl.Int64("cache-size", 2048, "MiB of skills to keep in the cache directory; past it, those used longest ago go")
	fl.BoolVar(&o.SharedPaths, "shared-paths", false, "this worker sees the host's file system (same machine or network mounts): use request paths as they are")
	fl.StringVar(&o.TLS.CAFile, "tls-ca", "", "the authority of the cluster's certificate")
	fl.StringVar(&o.TLS.CertFile, "tls-cert", "", "this worker's certificate, for mutual TLS")
	fl.StringVar(&o.TLS.KeyFile, "tls-key", "", "this worker's key, for mutual TLS")
	fl.StringVar(&o.TLS.ServerName, "tls-server-name", "", "the name the cluster's certificate must have")
	fl.StringVar(&o.APIKeyFile, "api-key-file", "", "a file holding an API key for the cluster")
	fl.StringVar(&o.CodecKeyFile, "codec-key-file", "", "a file holding the 32-byte key (64 hex digits) the host seals payloads with")
	fl.StringVar(&o.Identity, "identity", "", "the worker's name in results (default host:pid)")
	fl.DurationVar(&o.StopTimeout, "stop-timeout", 10*time.Minute, "on SIGTERM, how long to wait for the runs in progress before cancelling them")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	o.CacheSize = *cacheMiB << 20
	if o.Address == "" || fl.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: skillhost-sandbox-temporal worker --address HOST:PORT [flags]")
		fl.PrintDefaults()
		return 2
	}
	if problems := o.check(); len(problems) > 0 {
		fmt.Fprintf(stderr, "skillhost-sandbox-temporal worker: %s: %s\n", problems[0].Key, problems[0].Message)
		return 2
	}
	f, err := StartWorker(o)
	if err != nil {
		fmt.Fprintln(stderr, "skillhost-sandbox-temporal worker:", err)
		return 1
	}
	fmt.Fprintf(stderr, "skillhost-sandbox-temporal worker %s: serving task queue %s on %s with the %s strategy\n", f.Name(), o.taskQueue(), o.Address, o.Strategy)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	f.Stop()
	return 0
}
