/*
 * main.c - the vigil executable: hands argv to the command table.
 */
#include <locale.h>

#include "runner/cli/cmd.h"

int
main(int argc, char **argv)
{
	setlocale(LC_CTYPE, "");
	return vg_cmd_main(argc, argv);
}
