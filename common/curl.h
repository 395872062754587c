/*
 * curl.h - libcurl is loaded on first use (common/curl.c): include
 * <curl/curl.h> as usual; when curl_easy_init() or curl_multi_init()
 * returns NULL, vg_curl_error() says why.
 */
#ifndef VG_COMMON_CURL_H
#define VG_COMMON_CURL_H

/* Why libcurl could not be used ("cannot load libcurl: ..."), or "out of
 * memory" when it is loaded and a handle still could not be made. */
const char *vg_curl_error(void);

#endif
