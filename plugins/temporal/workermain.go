package temporal

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
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
	var fsRead, fsWrite, network listFlag
	fl.Var(&fsRead, "fs-read", "with --shared-paths, host paths a job may read (repeatable or comma-separated; default none)")
	fl.Var(&fsWrite, "fs-write", "with --shared-paths, host paths a job may write, and read (repeatable or comma-separated; default none)")
	fl.Var(&network, "network", "the network a job may have: true (any), or host patterns (api.example.com, *.example.com, 10.0.0.5:443, * for any name); default none")
	fl.DurationVar(&o.Ceiling.MaxTimeout, "max-timeout", 0, "the longest timeout a job may have (default: any)")
	fl.StringVar(&o.MetricsAddr, "metrics", "", "serve Prometheus /metrics, /healthz and /readyz on this address (host:port; default: not served)")
	logLevel := fl.String("log-level", "info", "trace, debug, info, warn or error")
	logJSON := fl.Bool("log-json", false, "log JSON lines")
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
	level := hclog.LevelFromString(*logLevel)
	if level < hclog.Trace || level > hclog.Error {
		fmt.Fprintf(stderr, "skillhost-sandbox-temporal worker: --log-level %q: one of trace, debug, info, warn, error\n", *logLevel)
		return 2
	}
	var err error
	if o.Ceiling.FSRead, err = ParsePaths("--fs-read", fsRead); err == nil {
		if o.Ceiling.FSWrite, err = ParsePaths("--fs-write", fsWrite); err == nil {
			err = o.Ceiling.ParseNetwork(network)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "skillhost-sandbox-temporal worker:", err)
		return 2
	}
	if (len(fsRead) > 0 || len(fsWrite) > 0) && !o.SharedPaths {
		fmt.Fprintln(stderr, "skillhost-sandbox-temporal worker: --fs-read and --fs-write bound the host paths of a worker started with --shared-paths; without it a run gets no host path")
		return 2
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "skillhost-worker", Level: level, JSONFormat: *logJSON, Output: stderr})
	o.Logger = log
	f, err := StartWorker(o)
	if err != nil {
		log.Error("cannot start", "error", err.Error())
		return 1
	}
	log.Info("serving task queue", "worker", f.Name(), "task_queue", o.taskQueue(), "address", o.Address, "strategy", o.Strategy,
		"shared_paths", o.SharedPaths, "fs_read", o.Ceiling.FSRead, "fs_write", o.Ceiling.FSWrite, "network", o.Ceiling.networkString(),
		"max_timeout", o.Ceiling.MaxTimeout.String(), "metrics", f.MetricsAddr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	log.Info("draining", "signal", s.String(), "runs", f.Running(), "stop_timeout", o.StopTimeout.String())
	f.Stop()
	log.Info("drained")
	return 0
}

// listFlag is a flag that may be repeated, each value a comma-separated
// list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
