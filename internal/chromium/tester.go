package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"
)

// RequireEnv names the environment variable that makes StartTest fail,
// rather than skip, a test where no Chromium is installed (CI installs
// Chromium and sets it).
const RequireEnv = "LFCCHECK_REQUIRE_BROWSER"

// TB is the part of a test StartTest and Tester use; *testing.T has it.
type TB interface {
	Helper()
	Context() context.Context
	Cleanup(func())
	Fatal(args ...any)
	Skip(args ...any)
}

// Tester is a Page for a test: each method fails the test (with Fatal) on
// an error, and is bounded by the test's context and by the CallTimeout.
type Tester struct {
	T    TB
	Page *Page
}

// StartTest starts Chromium with opt for the test t (the start bounded by
// a minute) and returns its page; the browser is closed when the test
// ends. Where no Chromium is installed, the test is skipped, or fails
// when RequireEnv is set.
func StartTest(t TB, opt Options) *Tester {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	b, err := Start(ctx, opt)
	switch {
	case errors.Is(err, ErrNotFound) && os.Getenv(RequireEnv) != "":
		t.Fatal("no Chromium, and " + RequireEnv + " is set: install the Debian package chromium")
		return nil
	case errors.Is(err, ErrNotFound):
		t.Skip("no Chromium: install the Debian package chromium to run the browser test")
		return nil
	case err != nil:
		t.Fatal(err)
		return nil
	}
	t.Cleanup(func() { b.Close() })
	return &Tester{T: t, Page: b.Page()}
}

func (x *Tester) check(err error) {
	x.T.Helper()
	if err != nil {
		x.T.Fatal(err)
	}
}

// Call is Page.Call.
func (x *Tester) Call(method string, params any) json.RawMessage {
	x.T.Helper()
	r, err := x.Page.Call(x.T.Context(), method, params)
	x.check(err)
	return r
}

// Eval is Page.Eval.
func (x *Tester) Eval(expr string) string {
	x.T.Helper()
	v, err := x.Page.Eval(x.T.Context(), expr)
	x.check(err)
	return v
}

// Key is Page.Key.
func (x *Tester) Key(name string, code int) {
	x.T.Helper()
	x.check(x.Page.Key(x.T.Context(), name, code))
}

// MouseClick is Page.MouseClick.
func (x *Tester) MouseClick(px, py float64) {
	x.T.Helper()
	x.check(x.Page.MouseClick(x.T.Context(), px, py))
}

// Click is Page.Click.
func (x *Tester) Click(selector string) {
	x.T.Helper()
	x.check(x.Page.Click(x.T.Context(), selector))
}

// ClickAt is Page.ClickAt.
func (x *Tester) ClickAt(selector string, dx float64) {
	x.T.Helper()
	x.check(x.Page.ClickAt(x.T.Context(), selector, dx))
}

// InsertText is Page.InsertText.
func (x *Tester) InsertText(text string) {
	x.T.Helper()
	x.check(x.Page.InsertText(x.T.Context(), text))
}

// Screenshot is Page.Screenshot, checked with NotBlank.
func (x *Tester) Screenshot() []byte {
	x.T.Helper()
	shot, err := x.Page.Screenshot(x.T.Context())
	x.check(err)
	x.check(NotBlank(shot))
	return shot
}
