module faultline.local/bench/go-porcupine

go 1.19

require github.com/anishathalye/porcupine v0.0.0

// bench/linearizability.ts builds this program from a temporary copy of this directory, pointing the
// module at the local Porcupine source (FAULTLINE_PORCUPINE_SRC) with `go mod edit -replace`.
