package source

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
)

// TestRedactHostileURLs: whatever the URL's shape (user information with
// spaces, quotes, '?', '#' or '/', no path, another scheme, a malformed
// host), neither the password nor the query's signature shows in Parse's
// errors, in Redact's text or in RedactURL's name, while the host does.
func TestRedactHostileURLs(t *testing.T) {
	const pass, sig = "PASSWORD", "SIGNATURE"
	for _, tc := range []struct {
		url  string
		host string // what must still show
	}{
		{"http://u:" + pass + " X@h/x?X-Amz-Signature=" + sig, "h/x"},
		{"http://u:" + pass + "@h/x?X-Amz-Signature=" + sig + " tail", "h/x"},
		{`http://u:"` + pass + `"@h/x?sig=` + sig, "h/x"},
		{"https://u:PA'" + pass + "@h/x?a=b&X-Amz-Signature=" + sig, "h/x"},
		{"http://u:PA?" + pass + "@h/x?s=" + sig, "h/x"},
		{"http://u:PA#" + pass + "@h/x?s=" + sig, "h/x"},
		{"http://u:" + pass + "\t\n@h/x?s=" + sig, "h/x"},
		{"HTTPS://u:" + pass + "@h", "h"},
		{"http://u:" + pass + "@[::1/x?s=" + sig, "[::1/x"},
		{"http://:" + pass + "@h:99999/x?s=" + sig, "h:99999/x"},
		{"s3://u:" + pass + "@b/k", "b/k"},
		{"gs://u:" + pass + " X@b/k?" + sig, "b/k"},
		{"s3://b*/k?" + sig, "b*/k"},
		{"ftp://u:" + pass + "@h/x?s=" + sig, "h/x"},
	} {
		shown := []string{RedactURL(tc.url), Redact(`Get "` + tc.url + `": EOF`)}
		if _, err := Parse(tc.url); err != nil {
			shown = append(shown, err.Error())
		} else if IsURL(tc.url) {
			loc, _ := Parse(tc.url)
			shown = append(shown, loc.String())
		}
		for _, s := range shown {
			if strings.Contains(s, pass) || strings.Contains(s, sig) {
				t.Errorf("%q shows as %q", tc.url, s)
			}
		}
		if got := RedactURL(tc.url); !strings.HasSuffix(got, "://"+tc.host) {
			t.Errorf("RedactURL(%q) = %q, want it to name %s", tc.url, got, tc.host)
		}
	}
	for in, want := range map[string]string{
		`Get "https://h/b/k?X-Amz-Signature=abc&x=1": EOF`: `Get "https://h/b/k": EOF`,
		`http://u:p@h:1/k?t=s is gone`:                     `http://h:1/k is gone`,
		`no url here?`:                                     `no url here?`,
		`a http://h/x?s=1 and s3://u:p@b/k?y then`:         `a http://h/x and s3://b/k then`,
		`dial tcp 127.0.0.1:80: connection refused`:        `dial tcp 127.0.0.1:80: connection refused`,
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorLeadsWithServiceCode: an S3 error reads as the service's code
// and message, then the status, without the SDK's request and host ids.
func TestErrorLeadsWithServiceCode(t *testing.T) {
	s := newStore(t, "s3")
	s.put("k.jsonl", []byte("{}\n"))
	s.faults.set(func(f *faults) { f.deny = map[string]int{"/arch/k.jsonl": 403} })
	c := testClient(t)
	_, err := c.Glob(t.Context(), s.url("k.jsonl"))
	var ae smithy.APIError
	if !errors.As(err, &ae) || !errors.Is(err, ErrForbidden) {
		t.Fatalf("stat of a denied object: %v; want ErrForbidden and the service's error", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "stat s3://arch/k.jsonl: "+ae.ErrorCode()) || !strings.Contains(msg, "HTTP 403") ||
		strings.Contains(msg, "RequestID") || strings.Contains(msg, "HostID") {
		t.Errorf("error %q (code %q): want it to lead with the service's code, name HTTP 403 and no request or host id", msg, ae.ErrorCode())
	}
}

// FuzzRedact: a password and a query built into a URL never show in
// RedactURL's name of it, nor, for a URL as libraries print them (no
// space, quote or '/' in the user information, no space, quote or
// control character in the host and path), in Redact's text.
func FuzzRedact(f *testing.F) {
	f.Add("u", "PASS X", "h", "x/y", "X-Amz-Signature=SIG", "Get \"", "\": EOF")
	f.Add("", "p@ss/w?rd", "h:1", "", "a=b&c=d", "", "")
	f.Add("u", "PASSWORD", "[::1]", "k", "sig=SIGSIG", "error: ", " is gone")
	f.Fuzz(func(t *testing.T, user, pass, host, p, query, prefix, suffix string) {
		if len(pass) < 4 || len(query) < 4 || strings.ContainsAny(host+p, "@?#") || strings.Contains(host, "/") ||
			strings.Contains(query, "@") {
			return
		}
		u := "http://" + user + ":" + pass + "@" + host + "/" + p + "?" + query
		visible := "http://" + host + "/" + p
		leaks := func(s string) bool {
			return (strings.Contains(s, pass) && !strings.Contains(visible, pass)) ||
				(strings.Contains(s, query) && !strings.Contains(visible, query))
		}
		if got := RedactURL(u); leaks(got) {
			t.Fatalf("RedactURL(%q) = %q", u, got)
		}
		// Running text ends a URL at a space, a quote or a control
		// character (urlEnd): a URL as libraries print it has them
		// escaped, in every part (url.URL.String: "%20").
		if strings.Contains(user+pass, "/") || strings.ContainsFunc(user+pass+host+p+query, urlEnd) ||
			strings.Contains(prefix+suffix, "://") || strings.ContainsAny(prefix+suffix, "@") ||
			strings.Contains(prefix+suffix, pass) || strings.Contains(prefix+suffix, query) || strings.Contains(pass, "://") {
			return
		}
		if got := Redact(prefix + u + suffix); leaks(got) {
			t.Fatalf("Redact(%q) = %q", prefix+u+suffix, got)
		}
	})
}

// TestPrintable: a name with a control character is shown quoted with
// Go's escapes, one without as it is; an Error names its URL so, while
// its URL field (Location.String) stays exact.
func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"s3://b/esc/plain.jsonl", "s3://b/esc/plain.jsonl"},
		{"s3://b/esc/a__0x2f__b.jsonl", "s3://b/esc/a__0x2f__b.jsonl"},
		{"s3://b/esc/../x.jsonl", "s3://b/esc/../x.jsonl"},
		{"gs://b/esc/n\nl.jsonl", `"gs://b/esc/n\nl.jsonl"`},
		{"gs://b/esc/t\tb.jsonl", `"gs://b/esc/t\tb.jsonl"`},
		{"d/cr\r\x1b[2K\x7f.jsonl", `"d/cr\r\x1b[2K\x7f.jsonl"`},
		{"d/nel\u0085.jsonl", `"d/nel\u0085.jsonl"`},
		{"d/é 日本.jsonl", "d/é 日本.jsonl"},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	loc := Location{Scheme: SchemeS3, Bucket: "b", Key: "esc/n\nconvbatch: forged.jsonl"}
	e := &Error{Op: "stat", URL: loc.String(), Status: 404, Code: "NoSuchKey", Message: "The specified key does not exist."}
	if msg := e.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, `stat "s3://b/esc/n\nconvbatch: forged.jsonl": NoSuchKey`) {
		t.Errorf("Error() = %q: want the URL quoted, on one line", msg)
	}
	if back, err := Parse(e.URL); err != nil || back.Key != loc.Key {
		t.Errorf("Error.URL %q does not parse back to the key %q: %+v, %v", e.URL, loc.Key, back, err)
	}
}
