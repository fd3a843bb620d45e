// Command parharness gates and benchmarks the ParoQuant W4A8 GPU kernels.
package main

func main() {}
