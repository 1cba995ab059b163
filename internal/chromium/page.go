package chromium

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"time"
)

// Page is a DevTools session with a browser page. Its methods are not
// safe for concurrent use. Each waits at most the Options' CallTimeout
// for each command's answer, and no longer than its context allows; a
// command's error names the command.
type Page struct {
	ws      *wsConn
	timeout time.Duration
	next    int
}

// Call sends the DevTools command method with params (a value that
// encodes as a JSON object) and returns its result, skipping the events
// that come before it.
func (p *Page) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	p.next++
	id := p.next
	req, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var result json.RawMessage
	err = p.ws.bounded(ctx, p.timeout, func() error {
		if err := p.ws.send(req); err != nil {
			return err
		}
		for {
			raw, err := p.ws.recv()
			if err != nil {
				return err
			}
			var resp struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(raw, &resp) != nil || resp.ID != id {
				continue // an event, or the late answer to an abandoned command
			}
			if resp.Error != nil {
				return fmt.Errorf("%s", resp.Error.Message)
			}
			result = resp.Result
			return nil
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return result, nil
}

// Eval evaluates the JavaScript expression expr in the page, awaiting it
// if it is a promise, and returns its value: a string as it is, anything
// else as JSON ("null" for undefined). An exception thrown is an error.
func (p *Page) Eval(ctx context.Context, expr string) (string, error) {
	raw, err := p.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return "", err
	}
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("%s: %w", expr, err)
	}
	if r.Exception != nil {
		return "", fmt.Errorf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if s, ok := r.Result.Value.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(r.Result.Value)
	return string(b), err
}

// WaitFor evaluates the JavaScript condition cond every 30 ms until it is
// true (an exception counts as false), and fails when ctx ends first.
func (p *Page) WaitFor(ctx context.Context, cond string) error {
	expr := "(() => { try { return !!(" + cond + "); } catch (e) { return false; } })()"
	for {
		v, err := p.Eval(ctx, expr)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s is still false: %w", cond, err)
		} else if err != nil {
			return err
		}
		if v == "true" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is still false: %w", cond, ctx.Err())
		case <-time.After(30 * time.Millisecond):
		}
	}
}

// Navigate loads url in the page; it returns when the navigation has
// started (WaitFor can wait for what the page shows), or with the error
// the browser gives for it.
func (p *Page) Navigate(ctx context.Context, url string) error {
	raw, err := p.Call(ctx, "Page.navigate", map[string]any{"url": url})
	if err != nil {
		return err
	}
	var r struct {
		ErrorText string `json:"errorText"`
	}
	json.Unmarshal(raw, &r)
	if r.ErrorText != "" {
		return fmt.Errorf("loading %s: %s", url, r.ErrorText)
	}
	return nil
}

// Key presses and releases a key, as the keyboard does: name is its DOM
// key and code name ("ArrowLeft", "Enter"), code its virtual key code
// (37, 13).
func (p *Page) Key(ctx context.Context, name string, code int) error {
	for _, typ := range []string{"keyDown", "keyUp"} {
		if _, err := p.Call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": typ, "key": name, "code": name,
			"windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}); err != nil {
			return err
		}
	}
	return nil
}

// MouseClick presses and releases the left mouse button at (x, y), in CSS
// pixels from the viewport's top left corner.
func (p *Page) MouseClick(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if _, err := p.Call(ctx, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}); err != nil {
			return err
		}
	}
	return nil
}

// Click clicks the middle of the first element the CSS selector finds,
// with the mouse, after scrolling it into view.
func (p *Page) Click(ctx context.Context, selector string) error {
	return p.ClickAt(ctx, selector, -1)
}

// ClickAt is Click at dx pixels from the element's left edge (or from the
// viewport's, where the element starts left of it); dx < 0 clicks the
// middle.
func (p *Page) ClickAt(ctx context.Context, selector string, dx float64) error {
	raw, err := p.Eval(ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) { return null; } e.scrollIntoView({block: "center", inline: "nearest"}); const r = e.getBoundingClientRect(); return {X: %v < 0 ? r.x + r.width/2 : Math.max(r.x, 0) + %v, Y: r.y + r.height/2}; })()`, selector, dx, dx))
	if err != nil {
		return err
	}
	if raw == "null" {
		return fmt.Errorf("no element %s to click", selector)
	}
	var at struct{ X, Y float64 }
	if err := json.Unmarshal([]byte(raw), &at); err != nil {
		return fmt.Errorf("clicking %s: %w", selector, err)
	}
	return p.MouseClick(ctx, at.X, at.Y)
}

// InsertText types text into the element that has the focus.
func (p *Page) InsertText(ctx context.Context, text string) error {
	_, err := p.Call(ctx, "Input.insertText", map[string]any{"text": text})
	return err
}

// Screenshot captures the page's viewport as PNG.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	raw, err := p.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &shot); err != nil {
		return nil, fmt.Errorf("Page.captureScreenshot: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("Page.captureScreenshot: %w", err)
	}
	return b, nil
}

// NotBlank checks that a PNG image is not (nearly) blank: of every other
// pixel of every other row, at least one in 200 must be dark (red, green
// and blue below half on average).
func NotBlank(shot []byte) error {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return fmt.Errorf("the screenshot: %w", err)
	}
	b, dark, n := img.Bounds(), 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
			n++
		}
	}
	if dark < n/200 {
		return fmt.Errorf("the screenshot is (nearly) blank: %d dark pixels of %d sampled", dark, n)
	}
	return nil
}
