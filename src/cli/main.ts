/** The `sendpool` command line (placeholder until it lands). */
process.stderr.write("sendpool: no commands yet\n");
process.exitCode = 2;
