//! Every label the web page shows, in English and Russian: one table per language, looked up
//! by key. A key missing from a table is a test failure, never a blank on the page.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    En,
    Ru,
}

impl Lang {
    pub(crate) fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ru => "ru",
        }
    }

    pub(crate) fn parse(code: &str) -> Option<Lang> {
        match code {
            "en" => Some(Lang::En),
            "ru" => Some(Lang::Ru),
            _ => None,
        }
    }

    /// The first of the browser's languages the page speaks (`Accept-Language`), else English.
    pub(crate) fn from_accept(header: &str) -> Lang {
        header
            .split(',')
            .filter_map(|part| part.split(';').next())
            .map(|tag| tag.trim().to_ascii_lowercase())
            .find_map(|tag| Lang::parse(tag.split('-').next().unwrap_or("")))
            .unwrap_or(Lang::En)
    }

    pub(crate) fn t(self, key: &str) -> &'static str {
        let table = match self {
            Lang::En => EN,
            Lang::Ru => RU,
        };
        table.iter().find(|(k, _)| *k == key).map_or("?", |(_, v)| v)
    }
}

#[cfg(test)]
const KEYS: &[&str] = &[
    "title",
    "incarnation",
    "login",
    "token",
    "sign_in",
    "sign_out",
    "bad_token",
    "form_expired",
    "incarnations",
    "runs",
    "no_runs",
    "no_incarnations",
    "name",
    "playbook",
    "mode",
    "status",
    "started_by",
    "queued",
    "started",
    "finished",
    "recap",
    "run",
    "tasks",
    "task",
    "module",
    "params",
    "hosts",
    "host",
    "changed",
    "stdout",
    "stderr",
    "exit_code",
    "msg",
    "per_host",
    "masked",
    "live",
    "select_task",
    "hosts_of",
    "input",
    "earlier_hosts",
    "later_hosts",
    "error",
    "language",
    "no_params",
    "handler",
    "transcript",
    "transcript_tail",
    "whole_transcript",
    "form_foreign",
    "signed_out",
    "needs_role",
    "as_incarnation",
    "start_run",
    "start",
    "limit",
    "tags",
    "extra_vars",
    "extra_vars_more",
    "vault_password_file",
    "project_dir",
    "inventory",
    "edit_incarnation",
    "delete_incarnation",
    "delete",
    "save",
    "create",
    "new_incarnation",
    "cancel_run",
    "audit",
    "no_audit",
    "when",
    "actor",
    "action",
    "target",
    "detail",
    "older_entries",
    "schedules",
    "drift",
    "drifted",
    "drift_found_by",
    "outcome",
];

const EN: &[(&str, &str)] = &[
    ("title", "tack runs"),
    ("incarnation", "Incarnation"),
    ("login", "Sign in"),
    ("token", "Access token"),
    ("sign_in", "Sign in"),
    ("sign_out", "Sign out"),
    ("bad_token", "That token is not known or was revoked."),
    ("form_expired", "This sign-in form was not the one this page gave; sign in again here."),
    ("incarnations", "Incarnations"),
    ("runs", "Runs"),
    ("no_runs", "No runs yet."),
    ("no_incarnations", "No incarnations yet."),
    ("name", "Name"),
    ("playbook", "Playbook"),
    ("mode", "Mode"),
    ("status", "Status"),
    ("started_by", "Started by"),
    ("queued", "Queued"),
    ("started", "Started"),
    ("finished", "Finished"),
    ("recap", "Recap"),
    ("run", "Run"),
    ("tasks", "Tasks"),
    ("task", "Task"),
    ("module", "Module"),
    ("params", "Parameters"),
    ("hosts", "Hosts"),
    ("host", "Host"),
    ("changed", "Changed"),
    ("stdout", "Output"),
    ("stderr", "Errors"),
    ("exit_code", "Exit code"),
    ("msg", "Message"),
    ("per_host", "differs per host"),
    ("masked", "secret"),
    ("live", "live: this page follows the run"),
    ("select_task", "Choose a task to see its parameters and every host's result."),
    ("hosts_of", "of"),
    ("input", "Input"),
    ("earlier_hosts", "earlier hosts"),
    ("later_hosts", "later hosts"),
    ("error", "Error"),
    ("language", "Language"),
    ("no_params", "This task has no parameters to show."),
    ("handler", "handler"),
    ("transcript", "Transcript"),
    ("transcript_tail", "Its last 500 lines."),
    ("whole_transcript", "The whole text"),
    (
        "form_foreign",
        "This form was not one this page gave your session: reload the page and try again.",
    ),
    ("signed_out", "You are not signed in (or the session ended): sign in again."),
    ("needs_role", "Your token's role does not allow this; it needs the role"),
    ("as_incarnation", "as the incarnation says"),
    ("start_run", "Start a run"),
    ("start", "Start"),
    ("limit", "Limit"),
    ("tags", "Tags"),
    ("extra_vars", "Extra vars (JSON)"),
    ("extra_vars_more", "Extra vars (JSON), laid over the incarnation's"),
    ("vault_password_file", "Vault password file"),
    ("project_dir", "Project directory"),
    ("inventory", "Inventory"),
    ("edit_incarnation", "Edit"),
    ("delete_incarnation", "Delete"),
    ("delete", "Delete this incarnation (its runs stay)"),
    ("save", "Save"),
    ("create", "Create"),
    ("new_incarnation", "New incarnation"),
    ("cancel_run", "Cancel this run"),
    ("audit", "Audit log"),
    ("no_audit", "Nothing has been changed through the server yet."),
    ("when", "When"),
    ("actor", "Who"),
    ("action", "Action"),
    ("target", "Of"),
    ("detail", "Detail"),
    ("older_entries", "older entries"),
    ("schedules", "Schedules (JSON)"),
    ("drift", "Drift"),
    ("drifted", "drifted"),
    ("drift_found_by", "A scheduled run found what would change:"),
    ("outcome", "Outcome"),
];

const RU: &[(&str, &str)] = &[
    ("title", "Запуски tack"),
    ("incarnation", "Инкарнация"),
    ("login", "Вход"),
    ("token", "Токен доступа"),
    ("sign_in", "Войти"),
    ("sign_out", "Выйти"),
    ("bad_token", "Такой токен неизвестен или отозван."),
    ("form_expired", "Эта форма входа выдана не этой страницей; войдите здесь ещё раз."),
    ("incarnations", "Инкарнации"),
    ("runs", "Запуски"),
    ("no_runs", "Запусков пока нет."),
    ("no_incarnations", "Инкарнаций пока нет."),
    ("name", "Имя"),
    ("playbook", "Плейбук"),
    ("mode", "Режим"),
    ("status", "Состояние"),
    ("started_by", "Кто запустил"),
    ("queued", "В очереди с"),
    ("started", "Начат"),
    ("finished", "Закончен"),
    ("recap", "Итог"),
    ("run", "Запуск"),
    ("tasks", "Задачи"),
    ("task", "Задача"),
    ("module", "Модуль"),
    ("params", "Параметры"),
    ("hosts", "Хосты"),
    ("host", "Хост"),
    ("changed", "Изменено"),
    ("stdout", "Вывод"),
    ("stderr", "Ошибки"),
    ("exit_code", "Код выхода"),
    ("msg", "Сообщение"),
    ("per_host", "своё на каждом хосте"),
    ("masked", "секрет"),
    ("live", "в реальном времени: страница следит за запуском"),
    ("select_task", "Выберите задачу, чтобы увидеть её параметры и результат на каждом хосте."),
    ("hosts_of", "из"),
    ("input", "Входные данные"),
    ("earlier_hosts", "предыдущие хосты"),
    ("later_hosts", "следующие хосты"),
    ("error", "Ошибка"),
    ("language", "Язык"),
    ("no_params", "У этой задачи нет параметров для показа."),
    ("handler", "обработчик"),
    ("transcript", "Вывод запуска"),
    ("transcript_tail", "Последние 500 строк."),
    ("whole_transcript", "Весь текст"),
    (
        "form_foreign",
        "Эта форма выдана не этой страницей вашему сеансу: обновите страницу и повторите.",
    ),
    ("signed_out", "Вы не вошли (или сеанс закончился): войдите ещё раз."),
    ("needs_role", "Роль вашего токена этого не позволяет; нужна роль"),
    ("as_incarnation", "как в инкарнации"),
    ("start_run", "Запустить"),
    ("start", "Запустить"),
    ("limit", "Ограничение хостов"),
    ("tags", "Теги"),
    ("extra_vars", "Дополнительные переменные (JSON)"),
    ("extra_vars_more", "Дополнительные переменные (JSON) поверх переменных инкарнации"),
    ("vault_password_file", "Файл пароля vault"),
    ("project_dir", "Каталог проекта"),
    ("inventory", "Инвентарь"),
    ("edit_incarnation", "Изменить"),
    ("delete_incarnation", "Удалить"),
    ("delete", "Удалить эту инкарнацию (её запуски останутся)"),
    ("save", "Сохранить"),
    ("create", "Создать"),
    ("new_incarnation", "Новая инкарнация"),
    ("cancel_run", "Отменить запуск"),
    ("audit", "Журнал аудита"),
    ("no_audit", "Через сервер ещё ничего не меняли."),
    ("when", "Когда"),
    ("actor", "Кто"),
    ("action", "Действие"),
    ("target", "Над чем"),
    ("detail", "Подробности"),
    ("older_entries", "более ранние записи"),
    ("schedules", "Расписания (JSON)"),
    ("drift", "Дрейф"),
    ("drifted", "дрейф"),
    ("drift_found_by", "Запуск по расписанию нашёл, что изменилось бы:"),
    ("outcome", "Итог"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_have_every_key_and_nothing_else() {
        for table in [EN, RU] {
            let keys: Vec<&str> = table.iter().map(|(k, _)| *k).collect();
            assert_eq!(keys, KEYS);
        }
    }

    #[test]
    fn the_browser_language_is_honoured() {
        assert_eq!(Lang::from_accept("ru-RU,ru;q=0.9,en;q=0.8"), Lang::Ru);
        assert_eq!(Lang::from_accept("de-DE,en;q=0.5"), Lang::En);
        assert_eq!(Lang::from_accept("fr"), Lang::En);
    }
}
