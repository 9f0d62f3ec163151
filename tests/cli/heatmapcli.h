#pragma once
// Runs `attnlab heatmap` as a child process (ATTNLAB_EXE) for the heatmap command-line tests:
// HeatmapCliTest is the base of their test classes, with a temporary folder for the files.

#include <QByteArray>
#include <QFile>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QtGlobal>

namespace attn::test {

class HeatmapCliTest : public QObject
{
protected:
    struct Run
    {
        int exitCode = -1;
        QString out, err;
    };
    Run run(const QStringList &args)
    {
        QProcess process;
        process.setProgram(QStringLiteral(ATTNLAB_EXE));
        process.setArguments(QStringList {QStringLiteral("heatmap")} + args);
        process.start();
        Run r;
        if (!process.waitForFinished(120000))
            return r;
        r.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        r.out = QString::fromUtf8(process.readAllStandardOutput());
        r.err = QString::fromUtf8(process.readAllStandardError());
        return r;
    }

    /// `heatmap <args> --compute <mode> <option> <path>`.
    Run runComputed(const QStringList &args, const char *mode, const char *option,
                    const QString &path)
    {
        return run(args
                   + QStringList {QStringLiteral("--compute"), QLatin1String(mode),
                                  QLatin1String(option), path});
    }

    /// The file `heatmap <args> --out <path>` writes (empty when it fails: exit status ≠ 0).
    QByteArray exported(const QStringList &args, const QString &path)
    {
        const Run r = run(args + QStringList {QStringLiteral("--out"), path});
        if (r.exitCode != 0) {
            qWarning("%s", qPrintable(r.err));
            return {};
        }
        QFile file(path);
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }

    QTemporaryDir m_dir;
};

} // namespace attn::test
