package gpu

import (
	"fmt"
	"strings"
)

// LibraryReport is what Probe found for one vendor library.
type LibraryReport struct {
	Lib     string // the library's Error.Lib name: "CUDA driver library", "HIP runtime library", "cuBLASLt", "hipBLASLt", "NVML"
	Path    string // the name or path that bound ("" when none did)
	File    string // the file the dynamic loader mapped for it, symlinks resolved
	Version string // its version where one is cheap to read ("" otherwise)
	Note    string // where Version came from, or why this library despite its age
	// Err is why nothing bound (an *Error whose Tried lists every
	// candidate and why), or why the version could not be read.
	Err error
}

// String is the report on one line.
func (r LibraryReport) String() string {
	if r.Path == "" {
		msg := fmt.Sprint(r.Err)
		if strings.HasPrefix(msg, r.Lib) {
			return msg // "cuBLASLt not loaded: tried …"
		}
		return r.Lib + ": " + msg
	}
	s := r.Lib + ": " + r.Path
	if r.File != "" && r.File != r.Path {
		s += " (" + r.File + ")"
	}
	if r.Version != "" {
		s += ", version " + r.Version
	}
	if r.Note != "" {
		s += "; " + r.Note
	}
	if r.Err != nil {
		s += "; " + r.Err.Error()
	}
	return s
}

// Probe finds and binds the vendor libraries of a backend ("cuda": the
// CUDA driver, cuBLASLt and NVML; "hip": the HIP runtime and hipBLASLt;
// anything else, "auto" or "": all five, in that order: CUDA driver, HIP
// runtime, cuBLASLt, hipBLASLt, NVML) the way opening a device would, and
// reports each: what bound, or the search's error. It opens no device and
// creates no context; the versions are those readable without one:
//
//   - CUDA driver: cuDriverGetVersion, the CUDA version the driver
//     supports, called without cuInit (cuda.h gives it no
//     CUDA_ERROR_NOT_INITIALIZED return, unlike the device calls);
//   - HIP runtime: the version in its file name, not hipRuntimeGetVersion,
//     which initialises the runtime (see hip_find.go);
//   - cuBLASLt: cublasLtGetVersion (no handle needed);
//   - hipBLASLt: the version in its file name, as a file version;
//     hipblasLtGetVersion takes a handle, and creating one needs a device;
//   - NVML: nvmlSystemGetDriverVersion between nvmlInit_v2 and
//     nvmlShutdown.
//
// A library loaded here stays loaded, as after a failed Open.
func Probe(backend string) []LibraryReport {
	var out []LibraryReport
	wantCUDA, wantHIP := backend != "hip", backend != "cuda"
	if wantCUDA {
		out = append(out, probeCUDA())
	}
	if wantHIP {
		out = append(out, probeHIP())
	}
	if wantCUDA {
		out = append(out, probeCUBLASLt())
	}
	if wantHIP {
		out = append(out, probeHipBLASLt())
	}
	if wantCUDA {
		out = append(out, probeNVML())
	}
	return out
}

func probeCUDA() LibraryReport {
	r := LibraryReport{Lib: cudaLibName}
	lib, err := loadLib(cudaSpec())
	if err != nil {
		r.Err = err
		return r
	}
	r.Path, r.File = lib.path, lib.file
	var v int32
	if err := cuErr("cuDriverGetVersion", cuDriverGetVersion(&v)); err != nil {
		r.Err = err
		return r
	}
	r.Version = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	r.Note = "the CUDA version the driver supports"
	return r
}

func probeHIP() LibraryReport {
	r := LibraryReport{Lib: hipLibName}
	l, err := findHIP()
	if err != nil {
		r.Err = err
		return r
	}
	r.Path, r.File = l.path, l.file
	r.Version = versionString(sonameVersion(l.file))
	notes := []string{}
	if r.Version != "" {
		notes = append(notes, "version from the file name")
	}
	if l.note != "" {
		notes = append(notes, l.note)
	}
	r.Note = strings.Join(notes, "; ")
	return r
}

func probeCUBLASLt() LibraryReport {
	r := LibraryReport{Lib: "cuBLASLt"}
	l, err := openBLASLtLib()
	if err != nil {
		r.Err = err
		return r
	}
	r.Path, r.File = l.path, l.file
	v := int(l.cublasLtGetVersion()) // CUBLAS_VERSION's encoding (cublas_api.h): major*10000 + minor*100 + patch
	r.Version = fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
	return r
}

func probeHipBLASLt() LibraryReport {
	r := LibraryReport{Lib: "hipBLASLt"}
	l, err := openHipBLASLtLib()
	if err != nil {
		r.Err = err
		return r
	}
	r.Path, r.File = l.path, l.file
	if v := versionString(sonameVersion(l.file)); v != "" {
		r.Version = v
		r.Note = "version from the file name"
	}
	return r
}

func probeNVML() LibraryReport {
	r := LibraryReport{Lib: "NVML"}
	n, err := OpenNVML()
	if err != nil {
		r.Err = err // a failed search, or "PATH loaded but NVML did not start: …"
		return r
	}
	defer n.Close()
	r.Path, r.File = n.lib.path, n.lib.file
	r.Version, r.Err = n.DriverVersion()
	if r.Err == nil {
		r.Note = "the NVIDIA driver's version"
	}
	return r
}
