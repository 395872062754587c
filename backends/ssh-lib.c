/*
 * ssh-lib.c - libssh, loaded on the ssh backend's first call.
 *
 * libssh brings in libcrypto and the Kerberos libraries, whose loading
 * costs every vigil process's start (common/dl.h); only the ssh backend
 * uses it.  So vigil is not linked against libssh: this file defines the
 * libssh functions the backend calls, and the first call loads the library
 * (its soname, or $VIGIL_LIBSSH) and forwards.  Without the library,
 * ssh_new() and sftp_new() return NULL, ssh_version() returns NULL, and
 * vg_ssh_lib_error() says why.
 *
 * The table is the backend's calls with the prototypes of
 * <libssh/libssh.h> and <libssh/sftp.h>: a call the backend adds needs
 * its row here (the link fails without it).
 */
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "backends/ssh-lib.h"
#include "common/dl.h"

/* X(return type, name, (parameters), (arguments)) */
#define VG_SSH_FUNCS(X) \
	X(int, sftp_close, (sftp_file file), (file)) \
	X(int, sftp_closedir, (sftp_dir dir), (dir)) \
	X(int, sftp_dir_eof, (sftp_dir dir), (dir)) \
	X(int, sftp_get_error, (sftp_session sftp), (sftp)) \
	X(int, sftp_init, (sftp_session sftp), (sftp)) \
	X(sftp_attributes, sftp_lstat, (sftp_session session, \
	    const char *path), \
	    (session, path)) \
	X(int, sftp_mkdir, (sftp_session sftp, const char *directory, \
	    mode_t mode), \
	    (sftp, directory, mode)) \
	X(sftp_session, sftp_new, (ssh_session session), (session)) \
	X(sftp_file, sftp_open, (sftp_session session, const char *file, \
	    int accesstype, mode_t mode), \
	    (session, file, accesstype, mode)) \
	X(sftp_dir, sftp_opendir, (sftp_session session, const char *path), \
	    (session, path)) \
	X(ssize_t, sftp_read, (sftp_file file, void *buf, size_t count), \
	    (file, buf, count)) \
	X(sftp_attributes, sftp_readdir, (sftp_session session, \
	    sftp_dir dir), \
	    (session, dir)) \
	X(int, sftp_rmdir, (sftp_session sftp, const char *directory), \
	    (sftp, directory)) \
	X(int, sftp_seek64, (sftp_file file, uint64_t new_offset), \
	    (file, new_offset)) \
	X(sftp_attributes, sftp_stat, (sftp_session session, \
	    const char *path), \
	    (session, path)) \
	X(int, sftp_unlink, (sftp_session sftp, const char *file), \
	    (sftp, file)) \
	X(ssize_t, sftp_write, (sftp_file file, const void *buf, \
	    size_t count), \
	    (file, buf, count)) \
	X(int, ssh_channel_close, (ssh_channel channel), (channel)) \
	X(int, ssh_channel_get_exit_status, (ssh_channel channel), (channel)) \
	X(int, ssh_channel_is_closed, (ssh_channel channel), (channel)) \
	X(int, ssh_channel_is_eof, (ssh_channel channel), (channel)) \
	X(ssh_channel, ssh_channel_new, (ssh_session session), (session)) \
	X(int, ssh_channel_open_forward, (ssh_channel channel, \
	    const char *remotehost, int remoteport, const char *sourcehost, \
	    int localport), \
	    (channel, remotehost, remoteport, sourcehost, localport)) \
	X(int, ssh_channel_open_session, (ssh_channel channel), (channel)) \
	X(int, ssh_channel_poll_timeout, (ssh_channel channel, int timeout, \
	    int is_stderr), \
	    (channel, timeout, is_stderr)) \
	X(int, ssh_channel_read, (ssh_channel channel, void *dest, \
	    uint32_t count, int is_stderr), \
	    (channel, dest, count, is_stderr)) \
	X(int, ssh_channel_read_nonblocking, (ssh_channel channel, \
	    void *dest, uint32_t count, int is_stderr), \
	    (channel, dest, count, is_stderr)) \
	X(int, ssh_channel_request_exec, (ssh_channel channel, \
	    const char *cmd), \
	    (channel, cmd)) \
	X(int, ssh_channel_send_eof, (ssh_channel channel), (channel)) \
	X(int, ssh_channel_write, (ssh_channel channel, const void *data, \
	    uint32_t len), \
	    (channel, data, len)) \
	X(int, ssh_connect, (ssh_session session), (session)) \
	X(const char *, ssh_get_error, (void *error), (error)) \
	X(socket_t, ssh_get_fd, (ssh_session session), (session)) \
	X(char *, ssh_get_fingerprint_hash, ( \
	    enum ssh_publickey_hash_type type, unsigned char *hash, \
	    size_t len), \
	    (type, hash, len)) \
	X(int, ssh_get_publickey_hash, (const ssh_key key, \
	    enum ssh_publickey_hash_type type, unsigned char **hash, \
	    size_t *hlen), \
	    (key, type, hash, hlen)) \
	X(int, ssh_get_server_publickey, (ssh_session session, ssh_key *key), \
	    (session, key)) \
	X(int, ssh_is_connected, (ssh_session session), (session)) \
	X(enum ssh_keytypes_e, ssh_key_type, (const ssh_key key), (key)) \
	X(const char *, ssh_key_type_to_char, (enum ssh_keytypes_e type), \
	    (type)) \
	X(ssh_session, ssh_new, (void), ()) \
	X(int, ssh_options_set, (ssh_session session, \
	    enum ssh_options_e type, const void *value), \
	    (session, type, value)) \
	X(int, ssh_pki_import_privkey_file, (const char *filename, \
	    const char *passphrase, ssh_auth_callback auth_fn, \
	    void *auth_data, ssh_key *pkey), \
	    (filename, passphrase, auth_fn, auth_data, pkey)) \
	X(enum ssh_known_hosts_e, ssh_session_is_known_server, ( \
	    ssh_session session), \
	    (session)) \
	X(int, ssh_session_update_known_hosts, (ssh_session session), \
	    (session)) \
	X(int, ssh_userauth_agent, (ssh_session session, \
	    const char *username), \
	    (session, username)) \
	X(int, ssh_userauth_publickey, (ssh_session session, \
	    const char *username, const ssh_key privkey), \
	    (session, username, privkey)) \
	X(int, ssh_userauth_publickey_auto, (ssh_session session, \
	    const char *username, const char *passphrase), \
	    (session, username, passphrase)) \
	X(const char *, ssh_version, (int req_version), (req_version))

#define VG_SSH_VOID_FUNCS(X) \
	X(sftp_attributes_free, (sftp_attributes file), (file)) \
	X(sftp_free, (sftp_session sftp), (sftp)) \
	X(ssh_channel_free, (ssh_channel channel), (channel)) \
	X(ssh_clean_pubkey_hash, (unsigned char **hash), (hash)) \
	X(ssh_disconnect, (ssh_session session), (session)) \
	X(ssh_free, (ssh_session session), (session)) \
	X(ssh_key_free, (ssh_key key), (key)) \
	X(ssh_string_free_char, (char *s), (s))

static struct {
#define X(ret, name, params, args) ret (*name) params;
#define XV(name, params, args) void (*name) params;
	VG_SSH_FUNCS(X)
	VG_SSH_VOID_FUNCS(XV)
#undef X
#undef XV
} fn;

static int
bind_ssh(struct vg_dl *d, void *h)
{
#define X(ret, name, params, args) \
	if (vg_dl_sym(d, h, #name, (void **)&fn.name) != 0) \
		return -1;
#define XV(name, params, args) X(void, name, params, args)
	VG_SSH_FUNCS(X)
	VG_SSH_VOID_FUNCS(XV)
#undef X
#undef XV
	return 0;
}

static struct vg_dl lib = {
	.soname = "libssh.so.4", .env = "VIGIL_LIBSSH",
	.package = "libssh-4", .bind = bind_ssh, .once = PTHREAD_ONCE_INIT,
};

static void
load(void)
{
	vg_dl_load(&lib);
}

const char *
vg_ssh_lib_error(void)
{
	return vg_dl_ready(&lib, load) != 0 ? lib.why : NULL;
}

/* Each call: without the library, the zero of its return type (NULL, 0,
 * SSH_OK as an int) and nothing done; the callers that can come first
 * (ssh_new, ssh_version) check for NULL and say why. */
#define X(ret, name, params, args) \
	ret name params \
	{ \
		if (vg_dl_ready(&lib, load) != 0) \
			return (ret)0; \
		return fn.name args; \
	}
#define XV(name, params, args) \
	void name params \
	{ \
		if (vg_dl_ready(&lib, load) == 0) \
			fn.name args; \
	}
VG_SSH_FUNCS(X)
VG_SSH_VOID_FUNCS(XV)
#undef X
#undef XV
