// Package chromium drives a headless Chromium over the Chrome DevTools
// Protocol, for the tests that check lfccheck's pages in a real browser
// (the HTML viewer of traces and the explorer of 'lfccheck serve').
//
// Start runs Chromium with a fresh profile and connects to its page; the
// Page's methods send DevTools commands over a minimal WebSocket client
// (the standard library has none, and the protocol needs only masked text
// frames out and text frames in). Every call that can block takes a
// context (Close takes a few seconds at most) and returns its errors; none
// panics. A Page serves one caller at a time.
//
// For tests, StartTest and Tester wrap Start and Page: they skip or fail
// the test (through TB, which *testing.T satisfies, so that this package
// does not import testing) instead of returning errors, and bound each
// call by the test's context and the command timeout.
package chromium

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// names are the commands Find looks for on $PATH, in this order.
var names = []string{"chromium", "chromium-browser", "google-chrome"}

// ErrNotFound is returned (wrapped) by Find and Start when no Chromium is
// installed.
var ErrNotFound = errors.New("no Chromium (none of " + strings.Join(names, ", ") + " is on $PATH): install the Debian package chromium")

// Find returns the path of the first of chromium, chromium-browser and
// google-chrome found on $PATH, or ErrNotFound.
func Find() (string, error) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// Options says how Start runs Chromium.
type Options struct {
	// Bin is the program to run; "" looks for it with Find.
	Bin string
	// Width and Height are the window's size in pixels (0: Chromium's
	// default).
	Width, Height int
	// HideScrollbars hides the scroll bars, as in screenshots.
	HideScrollbars bool
	// CallTimeout bounds each DevTools command on top of its context: a
	// command whose answer has not come by then fails. 0 means one
	// minute; negative, no bound but the context.
	CallTimeout time.Duration
}

// Browser is a running headless Chromium with one page.
type Browser struct {
	cmd     *exec.Cmd
	profile string
	page    *Page
	// stderr is closed when Chromium's standard error ends; tail holds
	// its last lines, for errors.
	stderr chan struct{}
	mu     sync.Mutex
	tail   []string
	closed bool
}

var listening = regexp.MustCompile(`DevTools listening on ws://([^/\s]+)/`)

// Start runs headless Chromium on about:blank with a profile of its own in
// a new temporary directory, waits for its DevTools endpoint and connects
// to its page. ctx bounds the start only: the browser runs until Close.
// Where no Chromium is installed (Bin empty), the error wraps ErrNotFound.
func Start(ctx context.Context, opt Options) (*Browser, error) {
	bin := opt.Bin
	if bin == "" {
		var err error
		if bin, err = Find(); err != nil {
			return nil, err
		}
	}
	// The profile is not in a test's temporary directory: Chromium's
	// helper processes may still write to it for a moment after the
	// browser is killed, and Close retries its removal.
	profile, err := os.MkdirTemp("", "lfccheck-chromium-")
	if err != nil {
		return nil, err
	}
	args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"}
	if opt.HideScrollbars {
		args = append(args, "--hide-scrollbars")
	}
	args = append(args, "--remote-debugging-port=0", "--user-data-dir="+profile)
	if opt.Width > 0 && opt.Height > 0 {
		args = append(args, fmt.Sprintf("--window-size=%d,%d", opt.Width, opt.Height))
	}
	args = append(args, "about:blank")
	b := &Browser{cmd: exec.Command(bin, args...), profile: profile, stderr: make(chan struct{})}
	pipe, err := b.cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("starting Chromium: %w", err)
	}
	// Chromium's standard error is read to its end, so that it never
	// blocks on a full pipe; the first line naming the endpoint is passed
	// on.
	endpoint := make(chan string, 1)
	go func() {
		defer close(b.stderr)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case endpoint <- m[1]:
				default:
				}
			}
			b.mu.Lock()
			if b.tail = append(b.tail, line); len(b.tail) > 10 {
				b.tail = b.tail[1:]
			}
			b.mu.Unlock()
		}
	}()
	fail := func(err error) (*Browser, error) {
		b.Close()
		return nil, err
	}
	var host string
	select {
	case host = <-endpoint:
	case <-b.stderr:
		select {
		case host = <-endpoint:
		default:
			b.mu.Lock()
			tail := strings.Join(b.tail, "\n")
			b.mu.Unlock()
			return fail(fmt.Errorf("Chromium (%s) ended before starting its DevTools endpoint:\n%s", bin, tail))
		}
	case <-ctx.Done():
		return fail(fmt.Errorf("Chromium did not start its DevTools endpoint: %w", ctx.Err()))
	}
	pageWS, err := pageTarget(ctx, host)
	if err != nil {
		return fail(err)
	}
	c, err := dial(ctx, pageWS)
	if err != nil {
		return fail(fmt.Errorf("connecting to Chromium's page: %w", err))
	}
	timeout := opt.CallTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	b.page = &Page{ws: c, timeout: timeout}
	return b, nil
}

// pageTarget asks the DevTools endpoint at host for its targets and
// returns the WebSocket address of the page.
func pageTarget(ctx context.Context, host string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/json/list", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("listing Chromium's targets: %w", err)
	}
	defer resp.Body.Close()
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&targets); err != nil {
		return "", fmt.Errorf("listing Chromium's targets: %w", err)
	}
	for _, t := range targets {
		if t.Type == "page" && t.WS != "" {
			return t.WS, nil
		}
	}
	return "", fmt.Errorf("no page among Chromium's targets %+v", targets)
}

// Page returns the browser's page.
func (b *Browser) Page() *Page { return b.page }

// Close disconnects from the page, kills Chromium and removes its
// profile, retrying for up to 5 seconds while helper processes still
// write to it. It returns the error of that removal, if any; calling it
// again does nothing.
func (b *Browser) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	if b.page != nil {
		b.page.ws.close()
	}
	b.cmd.Process.Kill()
	// Wait closes the pipe of standard error: let its reader finish
	// first, for a moment.
	select {
	case <-b.stderr:
	case <-time.After(2 * time.Second):
	}
	b.cmd.Wait()
	var err error
	for i := 0; i < 50; i++ {
		if err = os.RemoveAll(b.profile); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
