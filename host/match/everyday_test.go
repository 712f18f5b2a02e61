package match

import (
	"bytes"
	"math"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// toyEveryday is a hand-weighted classifier: words about one's own life
// weigh towards everyday, words about code away from it.
func toyEveryday() *matchtext.Everyday {
	return matchtext.NewEveryday(-0.5, map[string]float64{
		"my": 1.5, "me": 1, "dentist": 2, "bill": 0.5, "twice": 0.3, "son": 1.5, "landlord": 2,
		"invoic": -0.5, "api": -2, "regex": -2, "docker": -2, "imag": -1, "queri": -1.5, "return": -0.5,
	})
}

// toyMessages are everyday questions (true) and requests about code.
var toyMessages = []struct {
	message  string
	everyday bool
}{
	{"my dentist billed me twice", true},
	{"my landlord kept the deposit", true},
	{"the regex for postcodes matches too much", false},
	{"our docker image takes ten minutes to build", false},
}

func TestEverydayRoundTrip(t *testing.T) {
	m := toyEveryday()
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := matchtext.ReadEveryday(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range toyMessages {
		if (m.Probability(ex.message) > 0.5) != ex.everyday {
			t.Errorf("%q: the toy classifier gives %.3f", ex.message, m.Probability(ex.message))
		}
		if got, want := r.Probability(ex.message), m.Probability(ex.message); math.Abs(got-want) > 1e-5 {
			t.Errorf("%q: %.6f after a round trip, %.6f before", ex.message, got, want)
		}
	}
}

func TestLexicalEverydayFactor(t *testing.T) {
	docs := []Doc{
		{Name: "billing-api", Description: "Bill customers: invoices, refunds, disputes.", Body: "Handle a disputed charge.\n"},
		{Name: "charts", Description: "Plot data.", Body: "A chart of charges.\n"},
	}
	model := toyEveryday()
	const everyday = "my dentist billed me twice, how do I dispute the charge"
	const request = "the billing api returns a dispute for the invoice"
	p := model.Probability(everyday)
	if p <= 0.5 || model.Probability(request) >= 0.5 {
		t.Fatalf("the toy classifier gives %.3f and %.3f", p, model.Probability(request))
	}
	pRequest := model.Probability(request)
	for _, c := range []struct {
		name             string
		strength, centre float64
		message          string
		want             float64
	}{
		{"everyday, strength 4, centre 0.5", 4, 0.5, everyday, math.Exp(-4 * (p - 0.5))},
		{"request, strength 4, centre 0.5", 4, 0.5, request, 1},
		{"everyday, off", -1, 0.5, everyday, 1},
		// The default centre is 0: every message is scaled, the likelier
		// an everyday question the more.
		{"everyday, default", 0, 0, everyday, math.Exp(-defaultEveryday * p)},
		{"request, default", 0, 0, request, math.Exp(-defaultEveryday * pRequest)},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkWholeFactor(t, docs, c.message, LexicalOptions{Everyday: -1}, LexicalOptions{Everyday: c.strength, EverydayCentre: c.centre, EverydayModel: model},
				func(x Explanation) float64 { return x.Everyday }, c.want)
		})
	}
}

// A user's message is hostile input: whatever it holds, the classifier
// gives a probability in [0, 1] (a long run of heavy words rounds to 1),
// and its words are distinct, non-empty and free of separators.
