/* placeholder: filled in by issue 9 */
typedef int dp_agent_placeholder_plot;
