package amdgpu

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzReadKernels checks that no input makes ReadKernels or Arch
// panic (a recovered panic counts as a failure here: it is a parser bug),
// that every error is one line, and that any accepted result is usable.
//
//	go test ./internal/amdgpu -run X -fuzz FuzzReadKernels -fuzztime 60s
func FuzzReadKernels(f *testing.F) {
	img, err := os.ReadFile(coPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(img)
	for _, n := range []int{0, 1, 4, 16, 20, 52, 63, 64, 120, 0x238, 0x300, len(img) / 2, len(img) - 64, len(img) - 1} {
		if n <= len(img) {
			f.Add(img[:n])
		}
	}
	f.Add(stripSectionHeaders(img))
	f.Add(truncateKeepingHeaders(img, 0x300))
	f.Add(metadataELF(testMetadata(testKernelMap())))
	f.Fuzz(func(t *testing.T, data []byte) {
		co, err := ReadKernels(data)
		checkErr(t, err)
		if err == nil {
			if co == nil || co.Arch == "" || co.Target == "" {
				t.Fatalf("accepted with empty fields: %+v", co)
			}
			for _, k := range co.Kernels {
				_ = k.Problems(false)
				_ = k.Problems(true)
			}
			if _, err := json.Marshal(co); err != nil {
				t.Fatal(err)
			}
		}
		arch, aerr := Arch(data)
		checkErr(t, aerr)
		if err == nil && (aerr != nil || arch != co.Arch) {
			t.Fatalf("ReadKernels says %s, Arch says %q (%v)", co.Arch, arch, aerr)
		}
	})
}

// FuzzDecodeMsgpack aims the fuzzer straight at the note decoder and the
// metadata walk, seeded with the real metadata of testdata/kern.co.
func FuzzDecodeMsgpack(f *testing.F) {
	f.Add(encodeMsgpack(testMetadata(testKernelMap())))
	if img, err := os.ReadFile(coPath); err == nil {
		if desc := realMetadataDesc(img); desc != nil {
			f.Add(desc)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeMsgpack(data)
		if err != nil {
			return
		}
		if _, err := parseMetadata(v); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	})
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, errPanic) {
		t.Fatalf("parser panicked: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "amdgpu: ") {
		t.Fatalf("error is not one amdgpu: line: %q", msg)
	}
}

// realMetadataDesc returns the NT_AMDGPU_METADATA descriptor of img.
func realMetadataDesc(img []byte) []byte {
	f, err := openAMDGPU(img)
	if err != nil {
		return nil
	}
	desc, err := metadataNote(f, img)
	if err != nil {
		return nil
	}
	return desc
}
