/*
 * classify-int.h - what the parts of the classifier share, private to
 * runner/policy/classify*.c and the schedulers' policy files
 * (schedulers/slurm-policy.c, gridengine-policy.c): the helpers that read a command's words
 * (classify-help.c) and the handlers by job that the table in
 * classify.c maps program names to (classify-write.c, classify-perms.c,
 * classify-disk.c, classify-net.c, classify-code.c, classify-sysconf.c,
 * classify-host.c, classify-sched.c, classify-container.c,
 * classify-shell.c), with the few helpers one of them lends another.
 * The public interface is runner/policy/classify.h.  Each function is
 * described above its definition.
 */
#ifndef VG_POLICY_CLASSIFY_INT_H
#define VG_POLICY_CLASSIFY_INT_H

#include "runner/policy/actx.h"
#include "runner/policy/classify.h"

struct pl_path;

/* classify-help.c */
int	pl_eq(const struct pl_field *f, const char *s);
/* The file f names when this command wrote it earlier (NULL when not),
 * with s set to read what it holds (its text when known). */
struct pl_file *pl_written_file(struct pl_an *an,
	    const struct pl_field *f, struct pl_stream *s);
int	pl_is_opt(const struct pl_field *f);
int	pl_has_opt(const struct pl_cmd *c, char ch, const char *lng);
int	pl_has_arg(const struct pl_cmd *c, const char *s);
int	pl_eq_any(const struct pl_field *f, const char *const *words);
int	pl_has_any(const struct pl_cmd *c, const char *const *words);
const struct pl_field	*pl_first_word(const struct pl_cmd *c);
int	pl_word_count(const struct pl_cmd *c);
int	pl_next_operand(const struct pl_cmd *c, int i, const char *shortargs,
	    int *dashdash);
const struct pl_field	*pl_opt_val(struct pl_an *an, const struct pl_cmd *c,
	    char sh, const char *lng);
struct pl_field	*pl_subfield(struct pl_an *an, const struct pl_field *f,
	    size_t off);
const char	*pl_pshow(const struct pl_path *p);
int	pl_is_remote(const struct pl_field *f);
void	pl_out_default(struct pl_cmd *c);
void	pl_secret_read(struct pl_an *an, struct pl_cmd *c,
	    const struct pl_path *p);
void	pl_delete_target(struct pl_an *an, struct pl_cmd *c,
	    const struct pl_field *f, int recursive);

/* classify-write.c */
void	pl_h_rm(struct pl_an *an, struct pl_cmd *c);
void	pl_h_rmdir(struct pl_an *an, struct pl_cmd *c);
void	pl_write_dest(struct pl_an *an, const struct pl_field *dest,
	    const char *why);
void	pl_h_copy(struct pl_an *an, struct pl_cmd *c);
void	pl_h_tee(struct pl_an *an, struct pl_cmd *c);
void	pl_h_truncate(struct pl_an *an, struct pl_cmd *c);
void	pl_h_touch(struct pl_an *an, struct pl_cmd *c);
void	pl_h_dd(struct pl_an *an, struct pl_cmd *c);
void	pl_h_reader(struct pl_an *an, struct pl_cmd *c);
void	pl_h_editor(struct pl_an *an, struct pl_cmd *c);
void	pl_h_emacs(struct pl_an *an, struct pl_cmd *c);
void	pl_h_shell_init(struct pl_an *an, struct pl_cmd *c);
void	pl_h_sd(struct pl_an *an, struct pl_cmd *c);
void	pl_h_sponge(struct pl_an *an, struct pl_cmd *c);
void	pl_h_crudini(struct pl_an *an, struct pl_cmd *c);
void	pl_h_sed(struct pl_an *an, struct pl_cmd *c);

/* classify-perms.c */
int	pl_mode_loosens(const char *m, int *setid, int secret);
void	pl_h_chmod(struct pl_an *an, struct pl_cmd *c);
void	pl_h_chown(struct pl_an *an, struct pl_cmd *c);
void	pl_h_setcap(struct pl_an *an, struct pl_cmd *c);
void	pl_h_priv(struct pl_an *an, struct pl_cmd *c);

/* classify-disk.c */
int	pl_has_prefix(const struct pl_cmd *c, const char *const *list);
void	pl_h_disk(struct pl_an *an, struct pl_cmd *c);
void	pl_h_imager(struct pl_an *an, struct pl_cmd *c);
void	pl_h_mount(struct pl_an *an, struct pl_cmd *c);

/* classify-net.c */
void	pl_h_curl(struct pl_an *an, struct pl_cmd *c);
void	pl_h_nc(struct pl_an *an, struct pl_cmd *c);
void	pl_h_socat(struct pl_an *an, struct pl_cmd *c);
void	pl_h_netsend(struct pl_an *an, struct pl_cmd *c);
void	pl_h_keys(struct pl_an *an, struct pl_cmd *c);
void	pl_h_remote_copy(struct pl_an *an, struct pl_cmd *c);

/* classify-code.c */
void	pl_shell_code(struct pl_an *an, struct pl_cmd *c,
	    const struct pl_field *code, int firstarg);
void	pl_h_shell(struct pl_an *an, struct pl_cmd *c);
void	pl_h_interp(struct pl_an *an, struct pl_cmd *c);
void	pl_h_awk(struct pl_an *an, struct pl_cmd *c);
void	pl_h_eval(struct pl_an *an, struct pl_cmd *c);
void	pl_h_source(struct pl_an *an, struct pl_cmd *c);
void	pl_h_trap(struct pl_an *an, struct pl_cmd *c);
void	pl_h_alias(struct pl_an *an, struct pl_cmd *c);
void	pl_h_cmdstring(struct pl_an *an, struct pl_cmd *c);
void	pl_h_ssh(struct pl_an *an, struct pl_cmd *c);

/* classify-sysconf.c */
void	pl_sysconf(struct pl_an *an, struct pl_cmd *c, const char *rule,
	    const char *what);
void	pl_h_crontab(struct pl_an *an, struct pl_cmd *c);
void	pl_h_at(struct pl_an *an, struct pl_cmd *c);
void	pl_h_systemctl(struct pl_an *an, struct pl_cmd *c);
void	pl_h_dbus(struct pl_an *an, struct pl_cmd *c);
void	pl_h_power_front(struct pl_an *an, struct pl_cmd *c);
void	pl_h_service(struct pl_an *an, struct pl_cmd *c);
void	pl_h_alternatives(struct pl_an *an, struct pl_cmd *c);
void	pl_h_firewall(struct pl_an *an, struct pl_cmd *c);
void	pl_h_sysctl(struct pl_an *an, struct pl_cmd *c);
void	pl_h_module(struct pl_an *an, struct pl_cmd *c);
void	pl_h_boot(struct pl_an *an, struct pl_cmd *c);
void	pl_h_hostconf(struct pl_an *an, struct pl_cmd *c);
void	pl_h_ip(struct pl_an *an, struct pl_cmd *c);
void	pl_h_net(struct pl_an *an, struct pl_cmd *c);
void	pl_h_pkg(struct pl_an *an, struct pl_cmd *c);
void	pl_h_security(struct pl_an *an, struct pl_cmd *c);

/* classify-host.c */
void	pl_h_kill(struct pl_an *an, struct pl_cmd *c);
void	pl_h_pkill(struct pl_an *an, struct pl_cmd *c);
void	pl_h_power(struct pl_an *an, struct pl_cmd *c);

/* classify-sched.c */
void	pl_h_miner(struct pl_an *an, struct pl_cmd *c);
void	pl_submit_loop(struct pl_an *an, struct pl_cmd *c);
void	pl_poll_loop(struct pl_an *an, struct pl_cmd *c);
void	pl_h_sleep(struct pl_an *an, struct pl_cmd *c);

/* classify-container.c */
void	pl_h_docker(struct pl_an *an, struct pl_cmd *c);
void	pl_h_xterm(struct pl_an *an, struct pl_cmd *c);

/* classify-shell.c */
void	pl_h_cd(struct pl_an *an, struct pl_cmd *c);
void	pl_h_assignlike(struct pl_an *an, struct pl_cmd *c);
void	pl_h_set(struct pl_an *an, struct pl_cmd *c);
void	pl_h_unset(struct pl_an *an, struct pl_cmd *c);
void	pl_h_read(struct pl_an *an, struct pl_cmd *c);
void	pl_h_mktemp(struct pl_an *an, struct pl_cmd *c);
void	pl_h_which(struct pl_an *an, struct pl_cmd *c);
void	pl_h_pathop(struct pl_an *an, struct pl_cmd *c);
void	pl_h_env(struct pl_an *an, struct pl_cmd *c);
void	pl_h_wait(struct pl_an *an, struct pl_cmd *c);
void	pl_h_true(struct pl_an *an, struct pl_cmd *c);
void	pl_h_find(struct pl_an *an, struct pl_cmd *c);
void	pl_h_lister(struct pl_an *an, struct pl_cmd *c);

#endif
