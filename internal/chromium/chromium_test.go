package chromium_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lfccheck/internal/chromium"
)

// TestNotFound: without Chromium on $PATH, Find and Start say so, naming
// the package to install.
func TestNotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := chromium.Find(); !errors.Is(err, chromium.ErrNotFound) {
		t.Fatalf("Find: %v", err)
	}
	b, err := chromium.Start(t.Context(), chromium.Options{Width: 800, Height: 600})
	if b != nil || !errors.Is(err, chromium.ErrNotFound) || !strings.Contains(err.Error(), "install the Debian package chromium") {
		t.Fatalf("Start: %v, %v", b, err)
	}
	// StartTest skips the test, or fails it when RequireEnv is set.
	for _, require := range []string{"", "1"} {
		t.Setenv(chromium.RequireEnv, require)
		fake := &fakeTB{ctx: t.Context()}
		if x := chromium.StartTest(fake, chromium.Options{}); x != nil {
			t.Fatalf("StartTest without Chromium, %s=%q: %v", chromium.RequireEnv, require, x)
		}
		want := "skip: no Chromium: install the Debian package chromium to run the browser test"
		if require != "" {
			want = "fatal: no Chromium, and LFCCHECK_REQUIRE_BROWSER is set: install the Debian package chromium"
		}
		if fake.said != want {
			t.Errorf("StartTest without Chromium, %s=%q: %q, want %q", chromium.RequireEnv, require, fake.said, want)
		}
	}
}

// fakeTB records how StartTest ends a test.
type fakeTB struct {
	ctx  context.Context
	said string
}

func (f *fakeTB) Helper()                  {}
func (f *fakeTB) Context() context.Context { return f.ctx }
func (f *fakeTB) Cleanup(func())           {}
func (f *fakeTB) Fatal(args ...any)        { f.said = "fatal: " + fmt.Sprint(args...) }
func (f *fakeTB) Skip(args ...any)         { f.said = "skip: " + fmt.Sprint(args...) }

// TestNoEndpoint: a program that ends, or never names its DevTools
// endpoint, is an error (the latter when the context ends), not a hang.
func TestNoEndpoint(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := chromium.Start(t.Context(), chromium.Options{Bin: script("ends", "echo broken >&2; exit 1")})
	if err == nil || !strings.Contains(err.Error(), "ended before starting its DevTools endpoint") || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("a program that ends: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = chromium.Start(ctx, chromium.Options{Bin: script("silent", "exec sleep 60")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a program that says nothing: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a start cancelled after 300 ms took %v", d)
	}
}

// TestPage, where Chromium is installed (required with
// LFCCHECK_REQUIRE_BROWSER): a page loads, expressions evaluate, a click
// lands, a wait and a promise that never settles end with their contexts
// and leave the page usable, and the screenshot is not blank.
func TestPage(t *testing.T) {
	if _, err := chromium.Find(); err != nil {
		if os.Getenv("LFCCHECK_REQUIRE_BROWSER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<!doctype html><title>t</title><body style="font: 40px sans-serif">
<p id="text">lfccheck</p><button id="b" onclick="document.getElementById('text').textContent = 'clicked'">click</button></body>`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	b, err := chromium.Start(ctx, chromium.Options{Width: 640, Height: 480})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	p := b.Page()
	if err := p.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(ctx, `document.readyState === "complete" && document.getElementById("b")`); err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]string{
		`1 + 2`: "3",
		`document.getElementById("text").textContent`: "lfccheck",
		`({a: [1, "x"]})`:          `{"a":[1,"x"]}`,
		`Promise.resolve("later")`: "later",
		`undefined`:                "null",
	} {
		if got, err := p.Eval(ctx, expr); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", expr, got, err, want)
		}
	}
	if _, err := p.Eval(ctx, `nosuchname.x`); err == nil || !strings.Contains(err.Error(), "nosuchname") {
		t.Errorf("an exception: %v", err)
	}
	if err := p.Click(ctx, "#b"); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Eval(ctx, `document.getElementById("text").textContent`); got != "clicked" {
		t.Errorf("after the click: %q, %v", got, err)
	}
	if err := p.Click(ctx, "#nothing"); err == nil {
		t.Error("a click on no element succeeds")
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	err = p.WaitFor(short, `false`)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for false: %v", err)
	}
	short, cancelShort = context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = p.Eval(short, `new Promise(() => {})`)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a promise that never settles: %v", err)
	}
	if got, err := p.Eval(ctx, `"still " + "here"`); got != "still here" {
		t.Fatalf("after the cancelled calls: %q, %v", got, err)
	}
	shot, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromium.NotBlank(shot); err != nil {
		t.Error(err)
	}
}
