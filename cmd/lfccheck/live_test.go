package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
)

// A live run of the library, recorded, is a trace file that `lfccheck
// replay` accepts: every step replays through the model with every
// property holding, as the file records (no violation).
func TestLiveRecordingReplays(t *testing.T) {
	c, err := lfc.Start(lfc.Options{Nodes: 4, Credits: 1, HostBuffers: 1, Tree: "binomial", Record: lfc.RecordOn,
		Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3; k++ {
		for i := 0; i < 4; i++ {
			if err := c.Node(i).Multicast("", nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Node(i).Send((i+k+1)%4, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Recording()
	if err != nil {
		t.Fatal(err)
	}
	data, err := rec.TraceFile()
	if err != nil {
		t.Fatal(err)
	}
	tf := filepath.Join(t.TempDir(), "live.json")
	if err := os.WriteFile(tf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("replay", "--json", tf)
	var rep struct {
		Steps      int    `json:"steps"`
		Property   string `json:"property"`
		Reproduced bool   `json:"reproduced"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Reproduced || rep.Property != "" || rep.Steps != len(rec.Actions) {
		t.Fatalf("exit %d, %+v (%v)\n%s%s", code, rep, err, out, errs)
	}
}
