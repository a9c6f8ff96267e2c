// leader-peer: client-go's own leader election (LeaseLock, ReleaseOnCancel), the peer that `bun run
// bench:failover` measures @svc/election against. Prints one JSON line per event on stdout, with the wall time in
// milliseconds: ready, became-leader, new-leader-observed, lost-leadership. Exits 1 when leadership is lost
// (as the spec's components do) and 0 after SIGTERM/SIGINT (the Lease released).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func emit(event string, fields map[string]any) {
	line := map[string]any{"event": event, "time": time.Now().UnixMilli()}
	for k, v := range fields {
		line[k] = v
	}
	out, _ := json.Marshal(line)
	os.Stdout.Write(append(out, '\n'))
}

func seconds(value float64) time.Duration { return time.Duration(value * float64(time.Second)) }

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("namespace", "default", "namespace of the Lease")
	name := flag.String("name", "", "Lease name")
	identity := flag.String("id", "", "holder identity (the Pod name)")
	lease := flag.Float64("lease", 6, "leaseDurationSeconds")
	renew := flag.Float64("renew", 4, "renewDeadlineSeconds")
	retry := flag.Float64("retry", 1, "retryPeriodSeconds")
	flag.Parse()
	if *name == "" || *identity == "" {
		emit("config-error", map[string]any{"error": "-name and -id are required"})
		os.Exit(2)
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		emit("config-error", map[string]any{"error": err.Error()})
		os.Exit(2)
	}
	client := kubernetes.NewForConfigOrDie(config)
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: *name, Namespace: *namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *identity},
	}

	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	released := false
	go func() {
		<-signals
		released = true
		cancel()
	}()

	emit("ready", nil)
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		ReleaseOnCancel: true,
		LeaseDuration:   seconds(*lease),
		RenewDeadline:   seconds(*renew),
		RetryPeriod:     seconds(*retry),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				emit("became-leader", nil)
				<-ctx.Done()
			},
			OnStoppedLeading: func() {
				emit("lost-leadership", map[string]any{"released": released})
			},
			OnNewLeader: func(holder string) {
				if holder != *identity {
					emit("new-leader-observed", map[string]any{"holder": holder})
				}
			},
		},
	})
	if released {
		emit("stopped", nil)
		os.Exit(0)
	}
	os.Exit(1)
}
