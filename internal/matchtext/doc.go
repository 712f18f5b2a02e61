// Package matchtext is how the skill matcher reads text, and what it
// learned from text: the tokenizer (Analyze, Tokens), the word vectors
// (WordVectors), the everyday-question classifier (Everyday), the requests
// published skills lend to a skill (Examples) and the background messages
// a skill's breadth is measured on, each with the table built into the
// binary (DefaultWordVectors, DefaultEveryday, DefaultExamples,
// DefaultBackground).
//
// host/match matches with them; tools/matchlab, the matcher's laboratory,
// builds and tunes them. The package is internal so that neither is part
// of the host's public API; it lives under the module root's internal/
// because the laboratory lives outside host/.
package matchtext
