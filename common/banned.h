/*
 * banned.h - C library calls vigil's code may not use, made compile
 * errors.  Each writes a buffer without knowing its size (strcpy,
 * strcat, sprintf, vsprintf, gets, stpcpy), keeps hidden state across
 * calls (strtok) or names a temporary file another process can take
 * first (tmpnam, tempnam, mktemp).  Use vg_strlcpy, snprintf, vg_buf
 * (common/str.h, common/buf.h), strtok_r, mkstemp or mkdtemp.
 *
 * The Makefile hands it to every compile of vigil's own sources with
 * -include.  The headers that declare these calls come first (a poisoned
 * name may not appear even in a declaration), then the names are
 * poisoned: any later use is an error, "attempt to use poisoned".
 */
#ifndef VG_BANNED_H
#define VG_BANNED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC poison strcpy strcat sprintf vsprintf gets stpcpy strtok
#pragma GCC poison tmpnam tempnam mktemp

#endif
