// Package refimpl holds the CPU references every kernel of parharness is
// checked against. It knows nothing of GPUs: it is pure Go, and every
// function is a plain computation on slices.
//
// # The model
//
// A ParoQuant linear (docs/formats.md) computes, for an activation
// row x of K features and a weight of N output channels,
//
//	y = rot(x ⊙ channel_scales) · dequant(Q)ᵀ
//
// where dequant(Q)[n, k] = (q[k, n] − z[g, n]) · s[g, n] with g = k / 128,
// q and z are 4-bit (or 5-bit) unsigned codes packed in the AWQ order
// (awq.go), s is an fp16 group scale, and rot applies krot = 8 layers of
// disjoint Givens rotations inside every 128-feature group (rotation.go).
// A merged linear (qkv, gate_up, GDN in_proj) is P partitions along N, each
// with its own rotation, so the same activation row becomes P rotated rows
// ([P, M, K]) and output column n uses the rows of its partition.
//
// On the device the rotated activations are quantized to fp8 e4m3 (or int8)
// with one scale per (row, 128-group) or per row (token), and the GEMM folds
// the zero point through row sums of the decoded codes (actquant.go). The
// references here come in two kinds, and gates use both (docs/gates.md):
//
//   - Go mirrors (QuantizeActGroup, QuantizeActToken and their int8 forms;
//     float32 functions whose doc says "mirror") follow a kernel's
//     documented float32 op order so the kernel's bytes can be compared
//     exactly: codes, scale bits, row-sum bits. Their doc comments are the
//     contract the kernel follows. Go may fuse a*b+c into one FMA on some
//     architectures unless a product is converted explicitly (float32(a*b));
//     the mirrors do that wherever an op order matters, and FMA32 gives an
//     exactly rounded float32 fused multiply-add where the contract asks for
//     one.
//   - Semantic references run in float64 from the same codes and scales
//     (GEMMRef) or from the unquantized inputs (the *64 producers, Rotation),
//     and say what the result should be regardless of op order
//     (QuantizeAct64 and CheckActQuant for the producers). GEMM outputs
//     are judged by RelErr against them, with Bf16Floor as the scale of
//     tolerance.
//
// # Conventions
//
// Matrices are row-major slices with their dimensions passed alongside.
// Weight tensors keep the checkpoint layout ([K, N/8] words, [K/128, N]
// scales); the dequantized weight is indexed w[n, k] (output channel first),
// as in y[m, n] = Σ_k a[m, k]·w[n, k]. Shape or value errors that are
// programming mistakes panic with a "refimpl:" message; bad data (a
// checkpoint that breaks an invariant) is reported by the Validate methods as
// an error.
//
// The e4m3 codec (e4m3.go) is the one shared by every producer and gate.
package refimpl
