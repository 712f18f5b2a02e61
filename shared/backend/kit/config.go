package kit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// DecodeConfig decodes doc into v, a pointer to a struct with json tags,
// strictly: an unknown key or a value of the wrong type is a problem named
// by its key. A backend's SetConfig can be this and a check of the values.
func DecodeConfig(doc []byte, v any) []shared.ConfigProblem {
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
		return []shared.ConfigProblem{{Key: te.Field, Message: fmt.Sprintf("%s is not allowed here; want a %s", article(te.Value), jsonKind(te.Type.Kind().String()))}}
	case errors.As(err, &te):
		return []shared.ConfigProblem{{Message: "the settings must be a mapping, not " + article(te.Value)}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return []shared.ConfigProblem{{Key: key, Message: "unknown setting"}}
	}
	return []shared.ConfigProblem{{Message: strings.TrimPrefix(err.Error(), "json: ")}}
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
