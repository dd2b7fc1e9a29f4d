fn main() -> std::process::ExitCode {
    vaultchat::cli::run()
}
