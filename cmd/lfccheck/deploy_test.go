package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// yamlValue returns the value of the first "key: value" line of doc (any
// indentation), without quotes and comments.
func yamlValue(doc, key string) string {
	m := regexp.MustCompile(`(?m)^\s*-?\s*` + regexp.QuoteMeta(key) + `:\s*(.*?)\s*(#.*)?$`).FindStringSubmatch(doc)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"'`)
}

// acceptsWorkerArgs runs lfccheck with the arguments of a manifest as rank 0
// on a free loopback port, with the other workers unreachable: the flags
// are accepted when the search starts and waits for them.
func acceptsWorkerArgs(t *testing.T, args []string) {
	t.Helper()
	args = append(args, "--rank", "0", "--listen", "127.0.0.1:0", "--connect-timeout", "200ms")
	code, out, errs := runCLI(args...)
	if code != 2 || !strings.Contains(errs, "worker 1 (") || !strings.Contains(errs, "no answer within 200ms") {
		t.Fatalf("%v: exit %d: %s%s", args, code, out, errs)
	}
}

// TestKubernetesManifest checks the shape docs/distributed.md describes:
// a headless Service whose name is the pods' subdomain, an Indexed Job
// running every worker at once, and --peers naming the pods of every
// index through the Service, in rank order, with arguments lfccheck
// accepts.
func TestKubernetesManifest(t *testing.T) {
	data, err := os.ReadFile("../../deploy/k8s/lfccheck-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var svc, job string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		switch yamlValue(doc, "kind") {
		case "Service":
			svc = doc
		case "Job":
			job = doc
		}
	}
	if svc == "" || job == "" {
		t.Fatal("want a Service and a Job")
	}
	name := yamlValue(svc, "name")
	jobName := yamlValue(job, "name")
	port := yamlValue(svc, "port")
	switch {
	case yamlValue(svc, "clusterIP") != "None":
		t.Error("the Service is not headless (clusterIP: None)")
	case yamlValue(svc, "publishNotReadyAddresses") != "true":
		t.Error("the Service does not publish the pods' names before they are ready")
	case yamlValue(svc, "job-name") != jobName:
		t.Errorf("the Service selects job-name %q, the Job is %q", yamlValue(svc, "job-name"), jobName)
	case yamlValue(job, "apiVersion") != "batch/v1" || yamlValue(job, "completionMode") != "Indexed":
		t.Error("the Job is not an Indexed Job of batch/v1")
	case yamlValue(job, "subdomain") != name:
		t.Errorf("the pods' subdomain %q is not the Service %q", yamlValue(job, "subdomain"), name)
	case yamlValue(job, "restartPolicy") != "Never":
		t.Error("the pods' restartPolicy is not Never (which podFailurePolicy needs)")
	case yamlValue(job, "action") != "FailJob" || yamlValue(job, "values") != "[1, 3]":
		t.Error("a verdict (exit 1) or an incomplete search (exit 3) does not end the Job")
	case yamlValue(job, "claimName") == "" || yamlValue(job, "mountPath") == "":
		t.Error("no shared volume for the checkpoints")
	case yamlValue(job, "containerPort") != port:
		t.Errorf("the container port %q is not the Service's %q", yamlValue(job, "containerPort"), port)
	}
	n, err := strconv.Atoi(yamlValue(job, "completions"))
	if err != nil || n < 2 || yamlValue(job, "parallelism") != strconv.Itoa(n) {
		t.Fatalf("completions %q, parallelism %q: want the same number of workers, all at once", yamlValue(job, "completions"), yamlValue(job, "parallelism"))
	}
	var args []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- (check|--\S+)\s*$`).FindAllStringSubmatch(job, -1) {
		args = append(args, m[1])
	}
	var peers []string
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, "--peers="); ok {
			peers = strings.Split(p, ",")
		}
	}
	if len(peers) != n {
		t.Fatalf("--peers names %d workers, the Job runs %d", len(peers), n)
	}
	for i, p := range peers {
		if want := jobName + "-" + strconv.Itoa(i) + "." + name + ":" + port; p != want {
			t.Errorf("peer %d is %q, want %q (the pod of index %d through the Service)", i, p, want, i)
		}
	}
	ckpt := ""
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, "--checkpoint="); ok {
			ckpt = p
		}
	}
	if !strings.HasPrefix(ckpt, yamlValue(job, "mountPath")+"/") {
		t.Errorf("--checkpoint=%s is not on the shared volume mounted at %s", ckpt, yamlValue(job, "mountPath"))
	}
	if len(args) == 0 || args[0] != "check" {
		t.Fatalf("args %v", args)
	}
	acceptsWorkerArgs(t, args)
}

// TestSlurmScript checks the batch script: one task per node, ranks from
// srun, the peers from the job's nodes, arguments lfccheck accepts.
func TestSlurmScript(t *testing.T) {
	data, err := os.ReadFile("../../deploy/slurm/lfccheck.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{"#!/bin/bash\n", "#SBATCH --ntasks-per-node=1\n", `scontrol show hostnames "$SLURM_JOB_NODELIST"`, "srun "} {
		if !strings.Contains(s, want) {
			t.Errorf("the script has no %q", want)
		}
	}
	// The srun line and the lines it continues with a backslash.
	var line string
	in := false
	for _, l := range strings.Split(s, "\n") {
		in = in || strings.HasPrefix(l, "srun ")
		if !in {
			continue
		}
		c, more := strings.CutSuffix(l, "\\")
		line += c + " "
		if !more {
			break
		}
	}
	_, cmd, ok := strings.Cut(line, " lfccheck ")
	if !ok {
		t.Fatalf("srun does not run lfccheck: %q", line)
	}
	cmd = strings.ReplaceAll(cmd, `"$CKPT"`, filepath.Join(t.TempDir(), "ckpt"))
	args := strings.Fields(strings.ReplaceAll(cmd, `"$PEERS"`, "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3,127.0.0.1:4"))
	if !strings.Contains(cmd, `--peers "$PEERS"`) || !strings.Contains(cmd, "--checkpoint ") || !strings.Contains(s, "#SBATCH --requeue\n") {
		t.Fatalf("srun's lfccheck has no --peers \"$PEERS\", --checkpoint, or the job is not requeued: %q", cmd)
	}
	acceptsWorkerArgs(t, args)
}
