// Internal: the HDF5 functions the Keras reader calls, from a library loaded
// on first use. Linking HDF5 loads it (and, in Debian's build, libcurl with
// its TLS and Kerberos libraries: some 30 shared objects) into every vinfer
// process, 5-6 ms of each start, although only .h5 weight files need it.
#pragma once
#include <hdf5.h>

// HDF5's macros for flags and predefined ids (H5F_ACC_RDONLY, ...) call
// H5check_version and H5open from the linked library; here hdf5() has done
// both, through the loaded one.
#undef H5OPEN
#define H5OPEN
#undef H5CHECK
#define H5CHECK

namespace vinfer::zoo {

struct Hdf5Api {
#define VINFER_HDF5_FUNCTIONS(X)                                                                                       \
  X(Aclose) X(Aexists) X(Aget_space) X(Aget_type) X(Aopen) X(Aread) X(Dclose) X(Dget_space) X(Dget_type) X(Dopen2)     \
  X(Dread) X(Dvlen_reclaim) X(Eset_auto2) X(Fclose) X(Fis_hdf5) X(Fopen) X(Gclose) X(Gopen2) X(Lexists) X(Lvisit)      \
  X(Pclose) X(Pcreate) X(Pset_fapl_core) X(Pset_file_image) X(Sclose) X(Sget_simple_extent_dims)                      \
  X(Sget_simple_extent_ndims) X(Sget_simple_extent_npoints) X(Tclose) X(Tcopy) X(Tget_class) X(Tget_cset)             \
  X(Tget_size) X(Tis_variable_str) X(Tset_cset) X(Tset_size) X(free_memory)
#define VINFER_HDF5_MEMBER(name) decltype(&H5##name) name = nullptr;
  VINFER_HDF5_FUNCTIONS(VINFER_HDF5_MEMBER)
#undef VINFER_HDF5_MEMBER
  // The library's predefined types and property class (H5T_C_S1,
  // H5T_NATIVE_FLOAT, H5P_FILE_ACCESS), valid once it is open.
  hid_t c_s1 = -1, native_float = -1, file_access = -1;
};

// The HDF5 library this process already holds (a Python wheel bundles its
// own copy), else the one vinfer was built against, loaded once; thread-safe.
// Throws Unsupported, naming the library, where none can be loaded or its
// version differs from the headers'.
const Hdf5Api& hdf5();

}  // namespace vinfer::zoo
