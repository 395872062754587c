/*
 * base64.h - the value of a base64 character, in both alphabets (RFC 4648
 * section 4 '+' '/' and section 5 '-' '_'), for the decoders of gRPC
 * status details and of shell commands the policy analyses.
 */
#ifndef VG_BASE64_H
#define VG_BASE64_H

/* 0..63 for a character of either alphabet, -1 for anything else
 * (padding '=' included). */
int	vg_base64_value(int c);

#endif
