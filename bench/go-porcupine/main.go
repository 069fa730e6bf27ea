// Go Porcupine on Porcupine's reference histories, for bench:linearizability --go: the same 109
// files faultline checks, parsed here by this program's own readers (the formats are described in
// the fixtures' README), then CheckEventsTimeout(model, events, 0) once per file per pass. Prints
// one JSON object: per pass the check's wall and CPU time (parsing excluded) and the verdicts that
// differ from expected.json. Built and run only by the bench; nothing of Porcupine is in this file.
//
//	go-porcupine FIXTURES_DIR PASSES
//	go-porcupine --one ETCD_LOG BUDGET_MS
package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"
)

const nilValue = -1000000

type registerInput struct{ op, arg1, arg2 int } // op: 0 read, 1 write, 2 cas
type registerOutput struct {
	ok, exists, unknown bool
	value               int
}

// The etcd register: a read of nil sees no value; a failed cas saw another value; an unknown
// output (a timed-out read, an op still open at the end) matches any state.
var registerModel = porcupine.Model{
	Init: func() interface{} { return nilValue },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st := state.(int)
		in := input.(registerInput)
		out := output.(registerOutput)
		switch in.op {
		case 0:
			return out.unknown || (!out.exists && st == nilValue) || (out.exists && out.value == st), st
		case 1:
			return true, in.arg1
		default:
			next := st
			if in.arg1 == st {
				next = in.arg2
			}
			return out.unknown || (in.arg1 == st && out.ok) || (in.arg1 != st && !out.ok), next
		}
	},
	Hash: func(state interface{}) uint64 { return uint64(state.(int)) },
}

type kvInput struct {
	op         int // 0 get, 1 put, 2 append
	key, value string
}

// The kv store, partitioned by key: each key's string starts empty.
var kvModel = porcupine.Model{
	PartitionEvent: func(history []porcupine.Event) [][]porcupine.Event {
		byKey := map[string][]porcupine.Event{}
		keyOf := map[int]string{}
		var keys []string
		for _, ev := range history {
			if ev.Kind == porcupine.CallEvent {
				k := ev.Value.(kvInput).key
				keyOf[ev.Id] = k
				if _, seen := byKey[k]; !seen {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], ev)
			} else {
				k := keyOf[ev.Id]
				byKey[k] = append(byKey[k], ev)
			}
		}
		parts := make([][]porcupine.Event, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st := state.(string)
		in := input.(kvInput)
		switch in.op {
		case 0:
			return output.(string) == st, st
		case 1:
			return true, in.value
		default:
			return true, st + in.value
		}
	},
	Hash: func(state interface{}) uint64 {
		h := fnv.New64a()
		h.Write([]byte(state.(string)))
		return h.Sum64()
	},
}

// Events in order; a process's open op is matched by its next return.
type history struct {
	events []porcupine.Event
	open   map[int]int
	next   int
}

func newHistory() *history { return &history{open: map[int]int{}} }

func (h *history) call(proc int, input interface{}) {
	h.events = append(h.events, porcupine.Event{ClientId: proc, Kind: porcupine.CallEvent, Value: input, Id: h.next})
	h.open[proc] = h.next
	h.next++
}

func (h *history) ret(proc int, output interface{}) {
	h.events = append(h.events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: output, Id: h.open[proc]})
	delete(h.open, proc)
}

// A value as the log writes it: nil (no value: a cas from nil, generated histories have them) or a number.
func registerValue(text string) int {
	if text == "nil" {
		return nilValue
	}
	v, _ := strconv.Atoi(text)
	return v
}

var etcdLine = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(\w+)\s+:(\w+)\s+(.*?)\s*$`)

func parseEtcd(text string) ([]porcupine.Event, error) {
	h := newHistory()
	for n, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := etcdLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: not a jepsen.util line", n+1)
		}
		proc, _ := strconv.Atoi(m[1])
		kind, f, value := m[2], m[3], m[4]
		switch kind {
		case "invoke":
			in := registerInput{}
			switch f {
			case "read":
			case "write":
				in.op = 1
				in.arg1, _ = strconv.Atoi(value)
			case "cas":
				in.op = 2
				parts := strings.Fields(strings.Trim(value, "[]"))
				in.arg1 = registerValue(parts[0])
				in.arg2 = registerValue(parts[1])
			}
			h.call(proc, in)
		case "ok", "fail":
			out := registerOutput{ok: kind == "ok"}
			if f == "read" {
				if kind == "fail" {
					out.unknown = true
				} else if value != "nil" {
					out.exists = true
					out.value, _ = strconv.Atoi(value)
				}
			}
			h.ret(proc, out)
		case "info":
			// The op stays open: it returns, with an unknown output, after the last line.
		}
	}
	procs := make([]int, 0, len(h.open))
	for p := range h.open {
		procs = append(procs, p)
	}
	sort.Ints(procs)
	for _, p := range procs {
		h.ret(p, registerOutput{unknown: true})
	}
	return h.events, nil
}

var (
	kvProcess = regexp.MustCompile(`:process (\d+)`)
	kvType    = regexp.MustCompile(`:type :(\w+)`)
	kvF       = regexp.MustCompile(`:f :(\w+)`)
	kvKey     = regexp.MustCompile(`:key "([^"]*)"`)
	kvValue   = regexp.MustCompile(`:value (nil|"([^"]*)")`)
)

func parseKv(text string) ([]porcupine.Event, error) {
	h := newHistory()
	for n, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		p, t, f, k, v := kvProcess.FindStringSubmatch(line), kvType.FindStringSubmatch(line), kvF.FindStringSubmatch(line), kvKey.FindStringSubmatch(line), kvValue.FindStringSubmatch(line)
		if p == nil || t == nil || f == nil || k == nil || v == nil {
			return nil, fmt.Errorf("line %d: not a kv op map", n+1)
		}
		proc, _ := strconv.Atoi(p[1])
		if t[1] == "invoke" {
			in := kvInput{key: k[1], value: v[2]}
			switch f[1] {
			case "put":
				in.op = 1
			case "append":
				in.op = 2
			}
			h.call(proc, in)
		} else {
			h.ret(proc, v[2])
		}
	}
	return h.events, nil
}

type fixture struct {
	path     string
	model    porcupine.Model
	events   []porcupine.Event
	expected bool
}

func cpuMs() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// checkOne: one Porcupine etcd log (the register model) under a time budget, for the hard-history
// bench: prints {"result": "ok"|"illegal"|"unknown", "wallMs", "cpuMs"}, parsing excluded.
func checkOne(path string, budgetMs int) {
	text, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(254)
	}
	events, err := parseEtcd(string(text))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		os.Exit(254)
	}
	c0 := cpuMs()
	t0 := time.Now()
	res := porcupine.CheckEventsTimeout(registerModel, events, time.Duration(budgetMs)*time.Millisecond)
	wall := float64(time.Since(t0).Microseconds()) / 1000
	names := map[porcupine.CheckResult]string{porcupine.Ok: "ok", porcupine.Illegal: "illegal", porcupine.Unknown: "unknown"}
	out, _ := json.Marshal(map[string]interface{}{"result": names[res], "wallMs": wall, "cpuMs": cpuMs() - c0})
	fmt.Println(string(out))
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "--one" {
		budget, err := strconv.Atoi(os.Args[3])
		if err != nil || budget < 1 {
			fmt.Fprintln(os.Stderr, "BUDGET_MS: a positive integer")
			os.Exit(254)
		}
		checkOne(os.Args[2], budget)
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-porcupine FIXTURES_DIR PASSES")
		os.Exit(254)
	}
	dir := os.Args[1]
	passes, err := strconv.Atoi(os.Args[2])
	if err != nil || passes < 1 {
		fmt.Fprintln(os.Stderr, "PASSES: a positive integer")
		os.Exit(254)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(254)
	}
	var expected map[string]struct {
		Model        string `json:"model"`
		Linearizable bool   `json:"linearizable"`
	}
	if err := json.Unmarshal(raw, &expected); err != nil {
		fmt.Fprintln(os.Stderr, "expected.json:", err)
		os.Exit(254)
	}
	paths := make([]string, 0, len(expected))
	for p := range expected {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var fixtures []fixture
	for _, p := range paths {
		text, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(254)
		}
		var events []porcupine.Event
		model := registerModel
		if expected[p].Model == "kv" {
			model = kvModel
			events, err = parseKv(string(text))
		} else {
			events, err = parseEtcd(string(text))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", p, err)
			os.Exit(254)
		}
		fixtures = append(fixtures, fixture{p, model, events, expected[p].Linearizable})
	}
	type pass struct {
		WallMs float64 `json:"wallMs"`
		CpuMs  float64 `json:"cpuMs"`
	}
	var result struct {
		Files      int      `json:"files"`
		Passes     []pass   `json:"passes"`
		Mismatches []string `json:"mismatches"`
	}
	result.Files = len(fixtures)
	result.Mismatches = []string{}
	for i := 0; i < passes; i++ {
		c0 := cpuMs()
		t0 := time.Now()
		for _, f := range fixtures {
			ok := porcupine.CheckEventsTimeout(f.model, f.events, 0) == porcupine.Ok
			if ok != f.expected && i == 0 {
				result.Mismatches = append(result.Mismatches, f.path)
			}
		}
		result.Passes = append(result.Passes, pass{float64(time.Since(t0).Microseconds()) / 1000, cpuMs() - c0})
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
}
