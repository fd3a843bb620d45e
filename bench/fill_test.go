package bench

import (
	"bytes"
	"testing"

	"github.com/parharness/parharness/gpu"
)

// hostMem is a gpu.Device whose HtoD writes into host memory at the
// pointer value's offset: enough to check the upload helpers' placement.
type hostMem struct {
	gpu.Device
	mem []byte
}

func (h *hostMem) HtoD(dst gpu.Ptr, src []byte) error {
	copy(h.mem[int(dst):], src)
	return nil
}

func TestUploadHelpers(t *testing.T) {
	h := &hostMem{mem: make([]byte, 100)}
	c := &Ctx{Dev: h}
	// UploadRepeated: the pattern repeated, the last copy cut short.
	if err := UploadRepeated(c, gpu.Ptr(3), 10, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 0}; !bytes.Equal(h.mem[:14], want) {
		t.Errorf("UploadRepeated: %v, want %v", h.mem[:14], want)
	}
	// UploadEachCopy: each buffer's data at p + k·stride for every copy.
	h.mem = make([]byte, 100)
	if err := UploadEachCopy(c, 3, CopyUpload{CopySet{Base: gpu.Ptr(0), Stride: 10, Size: 2}, []byte{7, 7}}, CopyUpload{CopySet{Base: gpu.Ptr(50), Stride: 4, Size: 1}, []byte{9}}); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3; k++ {
		if h.mem[10*k] != 7 || h.mem[10*k+1] != 7 || h.mem[50+4*k] != 9 {
			t.Errorf("copy %d not written where expected: %v", k, h.mem)
		}
	}
	if h.mem[30] != 0 || h.mem[62] != 0 {
		t.Errorf("a fourth copy was written: %v", h.mem)
	}
}
