// Package thirdparty holds the test that builds an example backend the
// way a third party does: in a module of its own, outside this
// repository, that requires skillhost and may use only its public
// packages. It holds no code of its own.
package thirdparty
