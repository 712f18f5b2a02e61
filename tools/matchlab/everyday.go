package main

import (
	"math"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// everydayExample is one labelled message for trainEveryday.
type everydayExample struct {
	Message string
	// Everyday is true for a message that no skill should take.
	Everyday bool
}

// everydayOptions tune trainEveryday; zero values take the defaults.
type everydayOptions struct {
	// Epochs are passes over the examples (default 10).
	Epochs int
	// Rate is the step of stochastic gradient descent (default 0.1).
	Rate float64
	// L2 shrinks the weights of the words of each example towards zero
	// (default 0.01), so a word seen in a few messages does not decide.
	L2 float64
}

// trainEveryday learns the matcher's everyday-question classifier
// (matchtext.Everyday), a logistic regression over matchtext.EverydayWords, by
// stochastic gradient descent over the examples in order, starting from
// zero weights. It is deterministic: the same examples and options give
// the same table.
func trainEveryday(examples []everydayExample, o everydayOptions) *matchtext.Everyday {
	positiveOr(&o.Epochs, 10)
	positiveOr(&o.Rate, 0.1)
	positiveOr(&o.L2, 0.01)
	a := matchtext.NewAnalyzer()
	var bias float64
	weights := map[string]float64{}
	words := make([][]string, len(examples))
	for i, ex := range examples {
		words[i] = a.EverydayWords(ex.Message)
	}
	for range o.Epochs {
		for i, ex := range examples {
			g := logistic(bias, weights, words[i])
			if ex.Everyday {
				g--
			}
			bias -= o.Rate * g
			for _, w := range words[i] {
				weights[w] -= o.Rate * (g + o.L2*weights[w])
			}
		}
	}
	return matchtext.NewEveryday(bias, weights)
}

func logistic(bias float64, weights map[string]float64, words []string) float64 {
	z := bias
	for _, w := range words {
		z += weights[w]
	}
	return 1 / (1 + math.Exp(-z))
}
