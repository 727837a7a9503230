/* placeholder (issue 9) */
int main(void) { return 0; }
