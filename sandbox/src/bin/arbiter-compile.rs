//! Compiles one untrusted module for `arbiter-sandbox` in a separate,
//! resource-limited process. Started by the sandbox; not for use by hand.

fn main() -> std::process::ExitCode {
    arbiter_sandbox::compiler_child_main()
}
