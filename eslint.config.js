// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

/** date-fns functions that read the clock: banned in the core, where "now" is an argument. */
const clockReadingDateFns = [
  'isToday', 'isTomorrow', 'isYesterday', 'isPast', 'isFuture', 'isThisHour', 'isThisISOWeek',
  'isThisMinute', 'isThisMonth', 'isThisQuarter', 'isThisSecond', 'isThisWeek', 'isThisYear',
  'startOfToday', 'startOfTomorrow', 'startOfYesterday', 'endOfToday', 'endOfTomorrow',
  'endOfYesterday', 'formatDistanceToNow', 'formatDistanceToNowStrict', 'formatRelative',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/peers/colyseus/**', 'coverage/**', '.tavern/**', 'test/.generated/**', '.stryker-tmp/**', 'reports/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    // The dashboard: plain browser ES modules, served as written (no types to check against).
    files: ['src/dashboard/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The core decides and never performs I/O: no node, no clock, no ambient randomness, no other layer.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          'nanoid',
          ...builtinModules.map((name) => ({ name, message: 'The core performs no I/O.' })),
          { name: 'date-fns', importNames: clockReadingDateFns, message: 'These read the clock; take `now` as an argument.' },
        ],
        patterns: [
          { group: ['node:*'], message: 'The core performs no I/O.' },
          { group: ['**/io/**', '**/services/**', '**/adapters/**', '**/server/**', '**/sim/**'], message: 'The core imports only the core.' },
        ],
      }],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'setImmediate',
        'clearTimeout', 'clearInterval', 'queueMicrotask', 'fetch', 'console', 'crypto', 'performance',
        'Buffer', 'require'],
      'no-restricted-properties': ['error',
        { object: 'Date', property: 'now', message: 'Take `now` as an argument.' },
        { object: 'Math', property: 'random', message: 'Take a seed as an argument.' },
      ],
      'no-restricted-syntax': ['error', {
        selector: "NewExpression[callee.name='Date'][arguments.length=0]",
        message: 'new Date() reads the clock; take `now` as an argument.',
      }],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The sample games: a Node game server, and the page the CDN serves to browsers.
    files: ['examples/**/*.js'],
    languageOptions: { globals: globals.node, sourceType: 'module' },
  },
  {
    files: ['examples/**/client/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
);
