// The subcommands; each takes the arguments after its name and returns the process exit code.
#pragma once

namespace fp {

int run_command(int argc, char** argv);
int explain_command(int argc, char** argv);
int make_model_command(int argc, char** argv);
int accept_command(int argc, char** argv);
int ab_command(int argc, char** argv);
int fingerprint_command(int argc, char** argv);
int diff_command(int argc, char** argv);
int gate_command(int argc, char** argv);
int history_command(int argc, char** argv);
int report_command(int argc, char** argv);
int gpus_command(int argc, char** argv);
int matrix_command(int argc, char** argv);
int init_command(int argc, char** argv);
int new_case_command(int argc, char** argv);
int support_command(int argc, char** argv);

}  // namespace fp
