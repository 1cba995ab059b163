package traces_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of the scenario tests")

// TestScenarios drives the model step by step through every
// testdata/*.scenario file (format: traces.Scenario), evaluates its expect
// checks, and compares the rendered steps, changes, violation and final
// state (traces.WriteText of traces.Run on all its actions) with the
// .golden file beside it. Run with -rewrite to regenerate the golden files
// after an intended change; the checks must still hold.
//
// Every scenario opens with a '#' comment saying what it shows and makes
// at least one check.
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.scenario")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), "# ") {
				t.Error("no opening '#' comment saying what the scenario shows")
			}
			sc, err := traces.ParseScenario(path, string(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Checks) == 0 {
				t.Error("no expect line: the scenario checks nothing but its golden output")
			}
			_, o, errs := sc.Run()
			for _, err := range errs {
				t.Error(err)
			}
			var buf bytes.Buffer
			traces.WriteText(&buf, o)
			golden := strings.TrimSuffix(path, ".scenario") + ".golden"
			if *rewrite {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Fatalf("output differs from %s (run with -rewrite after an intended change):\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

// Bad scenarios are rejected when parsed, with the file and line.
func TestScenarioParseErrors(t *testing.T) {
	const cfg = "config protocol=ucast nodes=2\n"
	for _, c := range []struct{ name, in, want string }{
		{"s", "host 0 launch\n", "s:1: the config line must come first"},
		{"s", "expect ok\n", "s:1: the config line must come first"},
		{"s", "# nothing\n\n", "s: no config line"},
		{"s", cfg + "config protocol=ucast\n", "s:2: a second config line (the first is line 1)"},
		{"s", "config nodes=2 protocol=ucast\n", "s:1: the first setting must be protocol=NAME"},
		{"s", "config protocol=tcp\n", `s:1: unknown protocol "tcp"`},
		{"s", "config protocol=ucast nodes\n", `s:1: "nodes": want key=value`},
		{"s", "config protocol=ucast nodes=2 color=red\n", `s:1: protocol ucast has no parameter "color"`},
		{"s", "config protocol=ucast nodes=2 credits=0\n", "s:1: credits=0: "},
		{"s", "config protocol=ucast nodes=2 flow=0:5:1\nhost 0 launch\n", "s:1: config: "},
		{"s", "config protocol=ucast nodes=2 variant=fast\n", `s:1: config: unknown ucast variant "fast"`},
		{"s", cfg + "host 0 jump\n", `s:2: neither a directive (config, KEY-file, expect) nor an action: unknown action "host 0 jump"`},
		{"s", cfg + "deliver 0->7\n", `s:2: node 7 out of range 0..1 in action "deliver 0->7"`},
		{"s", cfg + "deliver 0->0\n", `s:2: no link from a node to itself`},
		{"s", cfg + "expect\n", `s:2: unknown check "" (want expect followed by one of enabled:, enabled, disabled, state, ok, violated, terminal, final-ok, deadlock)`},
		{"s", cfg + "expect sunshine\n", `s:2: unknown check "sunshine"`},
		{"s", cfg + "expect state\n", "s:2: expect state needs an argument"},
		{"s", cfg + "expect enabled\n", "s:2: expect enabled needs an argument"},
		{"s", cfg + "expect ok now\n", "s:2: expect ok takes no argument"},
		{"s", cfg + "expect final-ok please\n", "s:2: expect final-ok takes no argument"},
		{"s", cfg + "expect disabled host 9 launch\n", `s:2: node 9 out of range`},
		{"s", cfg + "expect enabled: host 0 launch, host 1 lunch\n", `s:2: unknown action "host 1 lunch"`},
		{"s", cfg + "expect violated liveness\n", `s:2: no property "liveness" is checked (checked: deadlock, `},
		{"s", "config protocol=ucast nodes=2 property=fifo\nexpect violated deadlock\n", `s:2: no property "deadlock" is checked (checked: fifo)`},
		{"s", cfg + "topology-file x.topo\n", `s:2: protocol ucast reads no parameter from a file as "topology-file"`},
		{"s", "config protocol=mcast\ncast-file x\n", `s:2: protocol mcast reads no parameter from a file as "cast-file"`},
		{"s", "config protocol=mcast\ntopology-file\n", "s:2: topology-file takes one path"},
		{"s", "config protocol=mcast\ntopology-file a b\n", "s:2: topology-file takes one path"},
		{"s", "config protocol=mcast\ntopology-file missing.topo\n", "s:2: open missing.topo: "},
		{"testdata/s", "config protocol=mcast\ntopology-file overlap-small.topo\ntopology-file overlap-small.topo\n", "testdata/s:3: topology given twice"},
		{"testdata/s", "config protocol=mcast\nhost 0 launch\ntopology-file overlap-small.topo\n", "testdata/s:3: topology-file must come before the first action or check"},
		{"testdata/s", "config protocol=mcast\ntopology-file ucast_one_packet.scenario\n", "testdata/s:2: topology-file ucast_one_packet.scenario: ucast_one_packet.scenario:"},
		{"testdata/s", "config protocol=mcast tree=chain\ntopology-file overlap-small.topo\n", "testdata/s:1: config: give a tree family or a topology, not both"},
		{"testdata/s", "config protocol=mcast nodes=4\ntopology-file overlap-small.topo\n", "testdata/s:1: config: nodes 4 disagrees with the topology"},
	} {
		_, err := traces.ParseScenario(c.name, c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want %q", c.in, err, c.want)
		}
	}
}

// Failed checks, inapplicable actions and actions after a violation are
// reported by Run with their line; checks after a failed action are not
// evaluated.
func TestScenarioRunErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"config protocol=ucast nodes=2\nexpect terminal\nhost 0 launch\nexpect violated fifo\nexpect disabled host 1 launch\nexpect enabled deliver 1->0\n", []string{
			"s:2: after 0 actions: not terminal: enabled: host 0 launch, host 1 launch",
			"s:4: after 1 actions: no property is violated, want fifo violated",
			`s:5: after 1 actions: "host 1 launch" is enabled`,
			`s:6: after 1 actions: "deliver 1->0" is not enabled (enabled: host 1 launch, deliver 0->1)`,
		}},
		{"config protocol=ucast nodes=2 flow=0:1:1\nexpect enabled: host 0 launch, host 1 launch\nexpect state ni 0: [to 1: credits 0 owes 0] recv [] send []\nexpect final-ok\n", []string{
			"s:2: after 0 actions: enabled: host 0 launch",
			`s:3: after 0 actions: no state line "ni 0: [to 1: credits 0 owes 0] recv [] send []" in`,
			"s:4: after 0 actions: not terminal: enabled: host 0 launch",
		}},
		{"config protocol=ucast nodes=2 flow=0:1:1\nexpect ok\nhost 0 launch\n\ndeliver 1->0\nexpect ok\n", []string{
			"s:5: deliver 1->0: not enabled (enabled: deliver 0->1)",
		}},
		// The refresh deadlock: the final state violates deadlock.
		{"config protocol=ucast nodes=2 credits=1 refresh=2 flow=0:1:2\nhost 0 launch\nhost 0 launch\ndeliver 0->1\nni 1 copy\nhost 1 process\nexpect final-ok\nexpect ok\nexpect violated fifo\n", []string{
			"s:7: after 5 actions: deadlock is violated: no action enabled, but 1 blocked sends",
			"s:8: after 5 actions: deadlock is violated: ",
			"s:9: after 5 actions: deadlock is violated: no action enabled, but 1 blocked sends, want fifo violated",
		}},
		{"config protocol=ucast nodes=2 flow=0:1:1\nhost 0 launch\ndeliver 0->1\nni 1 copy\nhost 1 process\nexpect deadlock\n", []string{
			"s:6: after 4 actions: not terminal: enabled: deliver 1->0",
		}},
		{"config protocol=ucast nodes=2 flow=0:1:1\nhost 0 launch\ndeliver 0->1\nni 1 copy\nhost 1 process\ndeliver 1->0\nexpect deadlock\n", []string{
			"s:7: after 5 actions: no property is violated, want deadlock",
		}},
		{"config protocol=mcast variant=credit-to-src nodes=3 tree=chain cast=0:1\nhost 0 launch\ndeliver 0->1\nni 1 copy\ndeliver 1->2\nni 2 copy\nhost 1 process\nexpect ok\n", []string{
			"s:7: host 1 process: trace goes on after credit-conservation was violated at step 5",
		}},
	} {
		sc, err := traces.ParseScenario("s", c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		_, _, errs := sc.Run()
		ok := len(errs) == len(c.want)
		for i := 0; ok && i < len(errs); i++ {
			ok = strings.HasPrefix(errs[i].Error(), c.want[i])
		}
		if !ok {
			t.Errorf("%q:\ngot  %q\nwant %q", c.in, errs, c.want)
		}
	}
}

// The topology the overlap scenario reads is the example shipped with the
// checker.
func TestScenarioTopologyIsTheExample(t *testing.T) {
	data, err := os.ReadFile("testdata/overlap-small.topo")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, mcast.OverlapSmallFile) {
		t.Fatal("testdata/overlap-small.topo differs from examples/overlap-small.topo")
	}
}
