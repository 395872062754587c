#ifndef VG_VERSION_H
#define VG_VERSION_H
#define VG_VERSION "0.1.0"
#endif
