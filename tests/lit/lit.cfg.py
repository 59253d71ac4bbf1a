# lit configuration: golden IR tests run autofuse-opt and check its output with FileCheck.
import os
import lit.formats

config.name = "autofuse"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ir"]
config.test_source_root = os.path.dirname(__file__)
root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
config.test_exec_root = os.path.join(root, "build", "lit")
tool_dirs = [os.path.join(root, "build", "py"), "/usr/lib/llvm-14/bin"]
config.environment["PATH"] = os.pathsep.join(tool_dirs + [os.environ.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
