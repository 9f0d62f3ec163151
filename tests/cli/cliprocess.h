#pragma once
// Runs the attnlab executable (ATTNLAB_EXE, set by tests/CMakeLists.txt for the command-line
// tests) as a child process and collects what it printed.

#include <QByteArray>
#include <QProcess>
#include <QStringList>

namespace attn::test {

/// One finished run: the exit code (-1 after a crash or a timeout) and both output streams.
struct CliRun
{
    int exitCode = -1;
    QByteArray out, err;
};

/// `attnlab arguments…`; killed after `timeoutMs` milliseconds (err then reads "timed out").
inline CliRun runAttnlab(const QStringList &arguments, int timeoutMs = 120000)
{
    QProcess p;
    p.setProgram(QStringLiteral(ATTNLAB_EXE));
    p.setArguments(arguments);
    p.start();
    CliRun r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

} // namespace attn::test
