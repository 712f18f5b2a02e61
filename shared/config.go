package shared

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Configurable is implemented by backends with settings of their own. The
// operator writes them under plugins.config.<name> in the host's
// configuration; the host passes that document through without reading it.
// It is optional: a backend without it takes no settings.
type Configurable interface {
	// SetConfig validates doc, a JSON object ("{}" when the operator set
	// nothing), and puts it in force if it is valid. It returns what is
	// wrong with it; an error means the backend could not look at all. The
	// host calls it once per process, after Info and before Probe, so
	// Probe may depend on the settings.
	SetConfig(ctx context.Context, doc []byte) ([]ConfigProblem, error)
}

// ConfigProblem is one thing wrong with a backend's settings.
type ConfigProblem struct {
	// Key is the dotted path of the offending key inside the backend's
	// document ("best_effort"), or "" for the document as a whole.
	Key string `json:"key,omitempty"`
	// Message says what is wrong, for a human.
	Message string `json:"message"`
}

func (p ConfigProblem) String() string {
	if p.Key == "" {
		return p.Message
	}
	return p.Key + ": " + p.Message
}

// ErrNotConfigurable is returned by SetConfig on the host side for a
// backend that takes no settings.
var ErrNotConfigurable = errors.New("this backend takes no settings")

// DecodeConfig decodes doc into v, a pointer to a struct with json tags,
// strictly: an unknown key or a value of the wrong type is a problem named
// by its key. A backend's SetConfig can be this and a check of the values.
func DecodeConfig(doc []byte, v any) []ConfigProblem {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return []ConfigProblem{{Key: te.Field, Message: fmt.Sprintf("%s is not allowed here; want a %s", article(te.Value), jsonKind(te.Type.Kind().String()))}}
	case errors.As(err, &te):
		return []ConfigProblem{{Message: "the settings must be a mapping, not " + article(te.Value)}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return []ConfigProblem{{Key: key, Message: "unknown setting"}}
	}
	return []ConfigProblem{{Message: strings.TrimPrefix(err.Error(), "json: ")}}
}

// jsonKind names a Go kind as the YAML or JSON a user wrote would.
func jsonKind(kind string) string {
	switch kind {
	case "bool":
		return "boolean (true or false)"
	case "string":
		return "string"
	case "slice", "array":
		return "list"
	case "map", "struct":
		return "mapping"
	}
	return "number"
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
