/* commands: one handler per command, each in a file of its own (cmd-*.c,
 * doctor.c); main.c's table says what each needs prepared. A handler returns
 * 0 (ctx->exit_status is the status to exit with) or -1 with err set. */
#ifndef GEMINI_BOX_COMMANDS_H
#define GEMINI_BOX_COMMANDS_H

#include "context.h"

int cmd_run(struct context *ctx, struct gb_error *err);
int cmd_shell(struct context *ctx, struct gb_error *err);
int cmd_status(struct context *ctx, struct gb_error *err);
int cmd_list(struct context *ctx, struct gb_error *err);
int cmd_stop(struct context *ctx, struct gb_error *err);
int cmd_rm(struct context *ctx, struct gb_error *err);
int cmd_recreate(struct context *ctx, struct gb_error *err);
int cmd_prune(struct context *ctx, struct gb_error *err);
int cmd_build(struct context *ctx, struct gb_error *err);
int cmd_config(struct context *ctx, struct gb_error *err);
int cmd_trust(struct context *ctx, struct gb_error *err);
int cmd_doctor(struct context *ctx, struct gb_error *err);
int cmd_egress(struct context *ctx, struct gb_error *err);

#endif
