// The names the image's settings files may use, so a misspelt key fails a test instead of being
// ignored at run time by the program that reads it.

/** Chromium policies this image may set, with their types (from Chromium's policy templates). */
export const KNOWN_CHROMIUM_POLICIES: Record<string, { type: "boolean" } | { type: "integer"; values: number[] }> = {
  AutofillAddressEnabled: { type: "boolean" },
  AutofillCreditCardEnabled: { type: "boolean" },
  BackgroundModeEnabled: { type: "boolean" },
  BrowserAddPersonEnabled: { type: "boolean" },
  BrowserGuestModeEnabled: { type: "boolean" },
  // 0 disabled, 1 enabled, 2 forced
  BrowserSignin: { type: "integer", values: [0, 1, 2] },
  DefaultBrowserSettingEnabled: { type: "boolean" },
  // 1 allow, 2 block, 3 ask
  DefaultNotificationsSetting: { type: "integer", values: [1, 2, 3] },
  // 0 allowed except force-installed extensions, 1 allowed, 2 disallowed
  DeveloperToolsAvailability: { type: "integer", values: [0, 1, 2] },
  FeedbackSurveysEnabled: { type: "boolean" },
  MetricsReportingEnabled: { type: "boolean" },
  PasswordManagerEnabled: { type: "boolean" },
  PrivacySandboxAdMeasurementEnabled: { type: "boolean" },
  PrivacySandboxAdTopicsEnabled: { type: "boolean" },
  PrivacySandboxPromptEnabled: { type: "boolean" },
  PrivacySandboxSiteEnabledAdsEnabled: { type: "boolean" },
  PromotionalTabsEnabled: { type: "boolean" },
  PromptForDownloadLocation: { type: "boolean" },
  // 1 restore the last session, 4 open a list of URLs, 5 open the new tab page
  RestoreOnStartup: { type: "integer", values: [1, 4, 5] },
  ShowFullUrlsInAddressBar: { type: "boolean" },
  SyncDisabled: { type: "boolean" },
  TranslateEnabled: { type: "boolean" },
  UrlKeyedAnonymizedDataCollectionEnabled: { type: "boolean" },
  UserFeedbackAllowed: { type: "boolean" },
};

/** xfce4-terminal 1.0 (bookworm) properties of the xfconf channel, with their xfconf types. */
export const KNOWN_XFCE_TERMINAL_PROPERTIES: Record<string, string> = {
  "color-background": "string",
  "color-foreground": "string",
  "color-palette": "string",
  "font-name": "string",
  "font-use-system": "bool",
  "misc-confirm-close": "bool",
  "misc-cursor-blinks": "bool",
  "misc-default-geometry": "string",
  "misc-menubar-default": "bool",
  "misc-show-unsafe-paste-dialog": "bool",
  "misc-toolbar-default": "bool",
  "scrolling-lines": "uint",
  "scrolling-unlimited": "bool",
};

/** Keys of a supervisord [program:x] section (supervisor 4.2). */
export const KNOWN_SUPERVISOR_PROGRAM_KEYS: string[] = [
  "command",
  "process_name",
  "numprocs",
  "numprocs_start",
  "priority",
  "autostart",
  "startsecs",
  "startretries",
  "autorestart",
  "exitcodes",
  "stopsignal",
  "stopwaitsecs",
  "stopasgroup",
  "killasgroup",
  "user",
  "redirect_stderr",
  "stdout_logfile",
  "stdout_logfile_maxbytes",
  "stdout_logfile_backups",
  "stdout_capture_maxbytes",
  "stdout_events_enabled",
  "stdout_syslog",
  "stderr_logfile",
  "stderr_logfile_maxbytes",
  "stderr_logfile_backups",
  "stderr_capture_maxbytes",
  "stderr_events_enabled",
  "stderr_syslog",
  "environment",
  "directory",
  "umask",
  "serverurl",
];
