package gen

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Dates selects the times a generated archive carries: the createdAt of
// documents and messages and the signed_at of receipts.
type Dates string

const (
	// DatesAuto (the zero value) is DatesNight, or DatesSpread when
	// Options.Faults > 0.
	DatesAuto Dates = ""
	// DatesNight is a night's export: conversations that start on
	// Options.Day (a few the evening before), messages a few seconds to
	// minutes apart in order (a long conversation runs past midnight),
	// each receipt signed minutes after its conversation's last message,
	// every time in the one spelling exporting apps write
	// (2026-11-29T14:03:27.123Z); nearly every document has a createdAt
	// (1 in 100 null, 1 in 100 absent), so nearly every message with
	// usage is dated.
	DatesNight Dates = "night"
	// DatesSpread is the hostile spread: times drawn apart over
	// 2023-2026 (and a leap second in 2016) in the many spellings RFC
	// 3339 allows (offsets, lower-case t and z, 1 to 9 fraction digits),
	// with 3 documents in 10 without a createdAt (so about a fifth of
	// the messages with usage are undated): the worst case of
	// day charts, day partitions and day reports.
	DatesSpread Dates = "spread"
)

// DefaultDay is the UTC day of a night's archive (DatesNight) when
// Options.Day is zero; WriteNights dates night N of a set DefaultDay
// plus N-1 days.
var DefaultDay = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// clockStream is the second PCG word of a night's times, a stream apart
// from the archive's own. (The two Dates still give different archives of
// one seed: the spread draws its times from the archive's stream, and a
// createdAt more or less changes the draws of the member order.)
const clockStream = 0x6e69676874636c6b // "nightclk"

// resolveDates returns the Dates an archive is written with: d, or for
// DatesAuto the one that faults imply; it refuses an unknown value.
func resolveDates(d Dates, faults float64) (Dates, error) {
	switch d {
	case DatesAuto:
		if faults > 0 {
			return DatesSpread, nil
		}
		return DatesNight, nil
	case DatesNight, DatesSpread:
		return d, nil
	}
	return "", fmt.Errorf("gen: unknown Dates %q (want night or spread)", d)
}

// dayMillis returns the start of day's UTC day in Unix milliseconds, or
// of DefaultDay when day is zero.
func dayMillis(day time.Time) int64 {
	if day.IsZero() {
		day = DefaultDay
	}
	y, m, d := day.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMilli()
}

// dayString returns the UTC date (YYYY-MM-DD) of the time ms (Unix ms).
func dayString(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.DateOnly)
}

const (
	second = int64(1000)
	minute = 60 * second
	hour   = 60 * minute
)

// A clock draws the times of a night's archive (DatesNight) from its own
// random stream: each conversation's start, then its messages in order.
type clock struct {
	r   *rand.Rand
	day int64 // the day's start, Unix ms
	t   int64 // the time of the conversation's latest message (or its start)
}

// newClock returns the clock of an archive of the given seed dated on the
// UTC day that starts at day (Unix ms).
func newClock(seed uint64, day int64) *clock {
	return &clock{r: rand.New(rand.NewPCG(seed, clockStream)), day: day}
}

// start begins a conversation: from 6 hours before the day's start (the
// evening before) to its end.
func (c *clock) start() {
	c.t = c.day - 6*hour + c.r.Int64N(30*hour)
}

// message moves the clock to the next message of the conversation: a
// user's 5 seconds to 10 minutes after the previous one, any other role's
// (an answer, a tool result) 1 to 90 seconds after. A conversation of 200
// messages (the longest) so ends within 20 hours of its start, and every
// time of a night's archive lies from 6 hours before its day to the end
// of the next day.
func (c *clock) message(role string) {
	if role == "user" {
		c.t += 5*second + c.r.Int64N(10*minute)
	} else {
		c.t += second + c.r.Int64N(90*second)
	}
}

// appendISO appends the time ms (Unix milliseconds) as exporting apps
// write it: UTC, millisecond fraction, Z (JavaScript's toISOString).
func appendISO(dst []byte, ms int64) []byte {
	return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
}

// signedAt returns the signing time of a receipt in a night's archive:
// 1 second to 10 minutes after end (its conversation's last message,
// Unix ms), or when end is 0 (a document with no timeline) any time of
// the day starting at day. r is the receipt's own clock stream.
func signedAt(r *rand.Rand, end, day int64) int64 {
	if end == 0 {
		return day + r.Int64N(24*hour)
	}
	return end + second + r.Int64N(10*minute)
}
