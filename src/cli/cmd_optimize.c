/* placeholder: dplace optimize (issue 9) */
int cmd_optimize(int argc, char **argv);
int cmd_optimize(int argc, char **argv) { (void)argc; (void)argv; return 1; }
